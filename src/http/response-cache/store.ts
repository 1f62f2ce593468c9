import { stringBytes } from '../../observability/heap-bytes.js';
import { answerHash, type EncodedAnswer, encodeAnswer } from './encoded-answer.js';

/** What a response-cache hit counts and logs, made once when its answer was kept. */
export interface HitRecord {
  readonly operation: string | undefined;
  /** `,"operation":"…"` for the hit's log line, or empty. */
  readonly operationField: string;
  /** Counts the hit in the metrics, its series found once (`GatewayMetrics.cacheHit`). */
  readonly countHit: (status: 200 | 304, seconds: number) => void;
}

/** An answer kept for reuse, with what it was built from and what a hit on it counts and logs. */
export interface CachedResponse extends HitRecord {
  readonly answer: EncodedAnswer;
  /**
   * Whether the status feed snapshots the answer was built from are all still current at a time,
   * epoch ms (`StatusFeed.currencyOf`): the answer is good while they are. It holds nothing of
   * them, so the memory an entry keeps is its bytes, which the store bounds, never a whole old feed.
   */
  readonly current: (now: number) => boolean;
  /** When the oldest of those snapshots stops being fresh (epoch ms): the answer's `max-age`. */
  readonly freshUntil: number;
  /**
   * Built from a snapshot standing in while the feed fails (`stale: true` in the answer): served
   * from here while it stands in, with `Cache-Control: no-store`, as the pipeline would.
   */
  readonly stale: boolean;
  /** The last `Cache-Control` value sent with it, made again only when its `max-age` changes. */
  readonly cacheControl: { maxAge: number; value: string };
}

/** Answers kept at most; the least recently used go first. */
const MAX_ENTRIES = 1_000;
/** Bytes of answers kept at most, every coding counted. */
const MAX_BYTES = 32 * 1024 * 1024;

/**
 * Whole answers to operations that read nothing but status feed snapshots, keyed by the exact
 * request (`requestKey`: the digest of its body or URL, and `Accept`): `lookup`, `keep`, and
 * `encode`, the codings of an answer to keep. It routes and sends nothing: `http/routes.ts` sends
 * it requests, and `http/cached-graphql.ts` serves what it holds. An answer is served again only
 * while every snapshot it was built from is still the feed's current, fresh one: the moment the
 * feed is refetched, the answer is rebuilt. So a hit is byte for byte what the full pipeline would
 * answer now. An answer no longer current stays until it is rebuilt or pushed out, so that a
 * rebuild with the same bytes reuses its codings (`previous`).
 */
export class ResponseCache {
  readonly #entries = new Map<string, Slot>();
  /** Codings under way, by content type and hash: concurrent rebuilds compress an answer once. */
  readonly #encoding = new Map<string, Promise<EncodedAnswer>>();
  #bytes = 0;
  /** Counts lookups that hit: a slot's `used` is the count at its last hit. */
  #clock = 0;

  /** The answer kept for `key`, if it is still current at `now` (epoch ms). */
  lookup(key: string, now: number): CachedResponse | undefined {
    const slot = this.#entries.get(key);
    if (slot === undefined || !slot.entry.current(now)) return undefined;
    // Recency is a number on the slot, not the Map's order: moving an entry to the end of the Map
    // on every hit (delete, set) churned its table.
    this.#clock += 1;
    slot.used = this.#clock;
    return slot.entry;
  }

  /** Estimated bytes of everything kept: what `MAX_BYTES` bounds (`npm run bench:caches`). */
  get bytes(): number {
    return this.#bytes;
  }

  /** The answer kept for `key`, current or not: what a rebuild may reuse. */
  previous(key: string): CachedResponse | undefined {
    return this.#entries.get(key)?.entry;
  }

  /**
   * The codings of an answer to keep under `key`: those of the answer kept before under the same
   * key when the bytes are the same (the feed was refetched and nothing changed: same ETag,
   * nothing to compress), else made now (`encodeAnswer`, with `vary`), once however many requests
   * rebuild it at the same time.
   */
  encode(key: string, bytes: Buffer, contentType: string, vary: string): Promise<EncodedAnswer> {
    const hash = answerHash(bytes);
    const previous = this.previous(key)?.answer;
    if (previous?.hash === hash && previous.contentType === contentType) {
      return Promise.resolve(previous);
    }
    const underWay = `${contentType} ${hash}`;
    let pending = this.#encoding.get(underWay);
    if (!pending) {
      pending = encodeAnswer(bytes, contentType, vary, hash).finally(() =>
        this.#encoding.delete(underWay),
      );
      this.#encoding.set(underWay, pending);
    }
    return pending;
  }

  /** Keeps `entry` under `key`, in place of the one before, within the store's bounds. */
  keep(key: string, entry: CachedResponse): void {
    const { answer, operation, operationField } = entry;
    // The operation's name is the client's text, up to the whole body: counted in the name and in
    // the log field made of it.
    const size =
      answer.size +
      stringBytes(key) +
      stringBytes(operation ?? '') +
      stringBytes(operationField) +
      ENTRY_OVERHEAD_BYTES +
      REPRESENTATION_OVERHEAD_BYTES * representationsOf(answer);
    if (size > MAX_BYTES / 8) return;
    const previous = this.#entries.get(key);
    if (previous) this.#delete(key, previous);
    this.#clock += 1;
    this.#entries.set(key, { entry, size, used: this.#clock });
    this.#bytes += size;
    while (this.#entries.size > MAX_ENTRIES || this.#bytes > MAX_BYTES) {
      this.#evictLeastUsed();
    }
  }

  /** Drops the entry hit longest ago: a scan, on stores only, which are rare. */
  #evictLeastUsed(): void {
    let oldest: [string, Slot] | undefined;
    for (const candidate of this.#entries) {
      if (oldest === undefined || candidate[1].used < oldest[1].used) oldest = candidate;
    }
    if (oldest) this.#delete(...oldest);
  }

  #delete(key: string, slot: Slot): void {
    this.#entries.delete(key);
    this.#bytes -= slot.size;
  }
}

/*
 * What an entry holds besides its bytes and names, as `npm run bench:caches` measures it
 * (docs/performance.md, "What the caches hold"): 2,270 bytes for an answer kept in one coding,
 * 2,650 in three.
 */
/** The slot, the entry, its closures, and the answer's own objects (its hash, its codings' map). */
const ENTRY_OVERHEAD_BYTES = 2_048;
/** A coding's buffer object and header list (its length, its ETag). */
const REPRESENTATION_OVERHEAD_BYTES = 256;

/** The codings an answer is kept in: the identity bytes, and brotli and gzip when they were made. */
function representationsOf(answer: EncodedAnswer): number {
  const identity = answer.representation('identity');
  return (
    1 +
    (answer.representation('br') === identity ? 0 : 1) +
    (answer.representation('gzip') === identity ? 0 : 1)
  );
}

/** An entry, its size, and when it was last hit. */
interface Slot {
  readonly entry: CachedResponse;
  readonly size: number;
  used: number;
}
