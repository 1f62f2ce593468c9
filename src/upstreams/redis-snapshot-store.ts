import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import { UpstreamBadResponseError } from '../errors/upstream-bad-response-error.js';
import { type UpstreamEndpoint, UpstreamError } from '../errors/upstream-error.js';
import { UpstreamUnavailableError } from '../errors/upstream-unavailable-error.js';
import type { RedisConnection } from '../redis/redis-connection.js';
import { redisScript } from '../redis/redis-script.js';
import type { SharedLoad, Snapshot, SnapshotSharing } from './snapshot-cache.js';
import {
  entityTag,
  lastModifiedTime,
  UNCHANGED,
  type Unchanged,
  type Validators,
} from './validators.js';

/*
 * Per document, three keys: `snapshot:<name>`, a hash of the upstream's document as validated
 * JSON (`body`), when it was fetched (`fetchedAt`, ms: or last confirmed unchanged by the upstream,
 * a 304), its `version` (the token of the fetch that stored it) and the upstream's validators of
 * it (`etag`, `lastModified`, when it sent them); `lock:<name>`, the token of the replica fetching it now; `failure:<name>`, the
 * last failed fetch (its token, the error's code and HTTP status, and when it failed: no text).
 * Notices of new snapshots and failures go out on the `snapshots` channel.
 *
 * Whoever can write to Redis can write any of these, so each is input like any other: its size is
 * checked in Redis before it is sent, its shape and times here before it counts, and keys that
 * would hold the replicas back (a lock or failure without expiry) are replaced.
 */

/**
 * Takes the lock, unless a newer snapshot was stored (another version, or the caller's confirmed
 * since its fetch time) or a failure must be answered. A failure or lock not as this code writes
 * them (no expiry or a longer one, a token of the wrong size, an unknown code) is deleted first; a
 * snapshot too large or from the future is not "newer".
 */
const acquireLock = redisScript<[status: string, detail?: string]>(`
local failureTtl = redis.call('PTTL', KEYS[3])
if failureTtl ~= -2 then
  local code = redis.call('HGET', KEYS[3], 'code')
  if failureTtl < 0 or failureTtl > tonumber(ARGV[6]) or
    (code ~= 'UPSTREAM_UNAVAILABLE' and code ~= 'UPSTREAM_BAD_RESPONSE') or
    redis.call('HSTRLEN', KEYS[3], 'token') > 64 or redis.call('HSTRLEN', KEYS[3], 'status') > 3 or
    redis.call('HSTRLEN', KEYS[3], 'at') > 16 then
    redis.call('DEL', KEYS[3])
  else
    local failure = redis.call('HMGET', KEYS[3], 'token', 'code', 'status', 'at')
    if failure[1] and (ARGV[4] == '1' or failure[1] == ARGV[3]) then
      return {'failed', failure[2], failure[3] or '', failure[4] or ''}
    end
  end
end
if redis.call('HSTRLEN', KEYS[2], 'version') <= 64 then
  local stored = redis.call('HMGET', KEYS[2], 'version', 'fetchedAt')
  local fetchedAt = tonumber(stored[2] or '')
  if stored[1] and fetchedAt and (stored[1] ~= ARGV[5] or fetchedAt > tonumber(ARGV[9])) and
    fetchedAt <= tonumber(ARGV[7]) and redis.call('HSTRLEN', KEYS[2], 'body') <= tonumber(ARGV[8]) then
    return {'stored', stored[1], stored[2]}
  end
end
local lockTtl = redis.call('PTTL', KEYS[1])
if lockTtl == -1 or lockTtl > tonumber(ARGV[2]) or
  (lockTtl ~= -2 and redis.call('STRLEN', KEYS[1]) > 64) then
  redis.call('DEL', KEYS[1])
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'acquired'} end
return {'held', redis.call('GET', KEYS[1]) or ''}`);

/**
 * The stored snapshot: its version and fetch time; its body when the version is not known and the
 * body is not over the size limit (then `large` and its size instead); and its validators (empty
 * when there are none, or they are too long to be the upstream's). A limit of -1 reads the version
 * and fetch time alone, for a notice to be checked against.
 */
const readSnapshot = redisScript<unknown[]>(`
if redis.call('HSTRLEN', KEYS[1], 'version') > 64 or redis.call('HSTRLEN', KEYS[1], 'fetchedAt') > 16 then
  return {'', '', 'large', 0}
end
local stored = redis.call('HMGET', KEYS[1], 'version', 'fetchedAt')
if not stored[1] or not stored[2] then return {} end
local validators = {'', ''}
if redis.call('HSTRLEN', KEYS[1], 'etag') <= 256 and redis.call('HSTRLEN', KEYS[1], 'lastModified') <= 256 then
  local given = redis.call('HMGET', KEYS[1], 'etag', 'lastModified')
  validators = {given[1] or '', given[2] or ''}
end
if stored[1] == ARGV[1] then return {stored[1], stored[2], '', '', validators[1], validators[2]} end
local size = redis.call('HSTRLEN', KEYS[1], 'body')
if size > tonumber(ARGV[2]) then return {stored[1], stored[2], 'large', size} end
return {stored[1], stored[2], 'body', redis.call('HGET', KEYS[1], 'body'), validators[1], validators[2]}`);

/**
 * Stores a snapshot unless a newer one is there, clears the failure, and tells the replicas. A
 * stored snapshot more than the clock skew ahead of this one is from the future: replaced.
 */
const storeSnapshot = redisScript(`
local stored = tonumber(redis.call('HGET', KEYS[1], 'fetchedAt') or '0') or 0
local fetchedAt = tonumber(ARGV[2])
if stored > fetchedAt and stored <= fetchedAt + tonumber(ARGV[7]) then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'fetchedAt', ARGV[2], 'body', ARGV[3])
if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'etag', ARGV[8]) end
if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'lastModified', ARGV[9]) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('DEL', KEYS[2])
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1`);

/**
 * Moves the stored snapshot's fetch time on (never back) when it is still the version the upstream
 * has just called unchanged (a 304), clears the failure and tells the replicas; 0 when Redis holds
 * another version, or none.
 */
const confirmSnapshot = redisScript(`
if redis.call('HSTRLEN', KEYS[1], 'version') > 64 or redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then
  return 0
end
local stored = 0
if redis.call('HSTRLEN', KEYS[1], 'fetchedAt') <= 16 then
  stored = tonumber(redis.call('HGET', KEYS[1], 'fetchedAt') or '0') or 0
end
if tonumber(ARGV[2]) > stored then redis.call('HSET', KEYS[1], 'fetchedAt', ARGV[2]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('DEL', KEYS[2])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1`);

/** Records a failed fetch for the replicas waiting on it (and, for a failure TTL, the others). */
const recordFailure = redisScript(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'code', ARGV[2], 'status', ARGV[3], 'at', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PUBLISH', ARGV[6], ARGV[7])
return 1`);

/** Keeps the lock (for ARGV[2] ms) while its holder still fetches; without ARGV[2], releases it. */
const renewOrRelease = redisScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return redis.call('DEL', KEYS[1])`);

/**
 * The largest stored document a replica reads (its JSON, as stored): a snapshot over it is left in
 * Redis unread, and one this large is not stored, so that each replica fetches it alone. The
 * upstream's own limit is 10 MiB of raw body; what a replica builds from a document is several
 * times its size, and a few of them at once must fit in a 256 MiB heap.
 */
export const MAX_STORED_SNAPSHOT_BYTES = 4 * 1024 * 1024;

/**
 * How far ahead of this replica's clock a stored `fetchedAt` may be (the replicas' clocks differ a
 * little). Beyond it a snapshot is from the future: refused, as it would be fresh for years.
 */
export const MAX_CLOCK_SKEW_MS = 5_000;

/** The longest notice this replica reads on the `snapshots` channel: a name, a token, a time. */
const MAX_NOTICE_BYTES = 1_024;

/**
 * The least time between two checks of a document's notices against Redis: a flood of notices
 * costs one small read per document per this many ms, whatever its rate.
 */
const NOTICE_CHECK_MS = 50;

export interface SharedDocumentOptions<Wire, Value> {
  /** Names the document in keys and notices (its path). */
  readonly name: string;
  /**
   * Fetches the document. With `validators` (those of the stored version this replica holds), the
   * fetch may be conditional, and resolve `UNCHANGED` when the upstream says it is (a 304).
   */
  readonly fetch: (requestId?: string, validators?: Validators) => Promise<Wire | Unchanged>;
  /**
   * The validators the upstream sent with a document `fetch` resolved, stored with it so that
   * whichever replica fetches next can ask whether it changed.
   * @default none: every fetch is unconditional
   */
  readonly validatorsOf?: (wire: Wire) => Validators | undefined;
  /**
   * Checks a stored document as the upstream's answer was checked: what comes out of Redis is
   * input like any other. It must accept the JSON of its own output.
   */
  readonly schema: z.ZodType<Wire>;
  /**
   * Indexes a document into the value every request reads (once per version per replica);
   * `storedBytes` is the length of its JSON as stored, what its owner sizes it by.
   */
  readonly build: (wire: Wire, storedBytes: number) => Value;
  readonly ttlMs: number;
  /** How long a stored snapshot is kept: as a stand-in while the upstream fails, and as the baseline of the next. */
  readonly retainMs: number;
  /** How long a failed fetch is answered to every replica before the upstream is asked again. */
  readonly failureTtlMs: number;
  /**
   * How long the lock outlives a replica that stopped renewing it (the upstream's timeout): a
   * replica that dies while fetching holds the others back no longer than this.
   */
  readonly lockMs: number;
  /**
   * The upstream a failure another replica recorded is reported against, with `GET` and `name`.
   * @default 'status feed'
   */
  readonly upstream?: string;
  /** @default Date.now */
  readonly now?: () => number;
}

/** How often a waiting replica looks at the lock, when no notice wakes it first. */
const POLL_MS = 100;

const Token = z.string().min(1).max(64);
const EpochMs = z.number().int().nonnegative();
/** A time in epoch ms, as Redis answers it. */
const EpochMsText = z
  .string()
  .regex(/^\d{1,15}$/)
  .transform(Number);

/** A notice on the `snapshots` channel: a new snapshot's, or (without version) a failure's. */
const Notice = z.object({
  name: z.string().min(1).max(256),
  version: Token.optional(),
  fetchedAt: EpochMs.optional(),
});
type Notice = z.infer<typeof Notice>;

/** A stored snapshot's version and fetch time, as Redis answers them. */
const StoredStamp = z.tuple([Token, EpochMsText]);

/** `acquireLock`'s answer when a newer snapshot is stored: its version and fetch time. */
const StoredReply = z.tuple([z.literal('stored'), Token, EpochMsText]);

/** A failure another replica recorded, as `acquireLock` answers it: a code, a status, a time. */
const FailureReply = z.tuple([
  z.literal('failed'),
  z.enum(['UPSTREAM_UNAVAILABLE', 'UPSTREAM_BAD_RESPONSE']),
  z.union([z.literal(''), z.string().regex(/^[1-5]\d\d$/)]),
  EpochMsText,
]);

/** A snapshot this replica stored: which document and version its changes belong to. */
export interface StoredSource {
  readonly name: string;
  readonly version: string;
}

/** How many of its own stores a replica remembers, for the change events that follow them. */
const REMEMBERED_STORES = 16;

/**
 * The status feed's snapshots, shared by the replicas through Redis. Per document and TTL one
 * replica fetches, whichever replica asks: it holds the document's lock (`SET NX PX` with a
 * token, renewed while it fetches), stores the validated document with its fetch time, and
 * publishes a notice; the others wait for the notice (or look every 100 ms), then build the
 * snapshot from the stored document, once per version. A fetch that fails is recorded for the
 * replicas that waited for it, so they answer its error instead of asking the upstream in turn.
 *
 * A notice only wakes waiters (who look at Redis themselves); it supersedes this replica's
 * snapshot only once Redis holds the snapshot it names, checked at most once per
 * `NOTICE_CHECK_MS` per document however many notices arrive.
 */
export class RedisSnapshotStore {
  readonly #redis: RedisConnection;
  readonly #channel: string;
  readonly #documents = new Map<string, SharedDocument<unknown, unknown>>();
  /** This replica's last stores, by fetch time: what its change events name. */
  readonly #stores = new LRUCache<number, StoredSource>({ max: REMEMBERED_STORES });

  constructor({ redis }: { redis: RedisConnection }) {
    this.#redis = redis;
    this.#channel = redis.key('snapshots');
    redis.subscribe(this.#channel, (message) => this.#onNotice(message), MAX_NOTICE_BYTES);
  }

  /**
   * The sharing of one document, for its `SnapshotCache`, registered for the notices about it
   * until it is closed (a status page released: nothing of it stays here).
   */
  document<Wire, Value>(options: SharedDocumentOptions<Wire, Value>): SnapshotSharing<Value> {
    const { name } = options;
    const document: SharedDocument<Wire, Value> = new SharedDocument(
      options,
      this.#redis,
      this.#channel,
      this.#stores,
      () => {
        // A page made again meanwhile registered a document of its own under the name.
        if (this.#documents.get(name) === document) this.#documents.delete(name);
      },
    );
    this.#documents.set(name, document as SharedDocument<unknown, unknown>);
    return document;
  }

  /** How many documents are registered: a test's window on what released pages leave. */
  get documents(): number {
    return this.#documents.size;
  }

  /**
   * The document and version of the snapshot this replica stored with fetch time `fetchedAt`
   * (what a change event found in its load names), `undefined` when it stored none then.
   */
  storedAt(fetchedAt: number): StoredSource | undefined {
    return this.#stores.peek(fetchedAt);
  }

  /**
   * The value of document `name`'s snapshot `version` when Redis holds it now (built from the
   * stored document, once per version), with the value this replica held before it; `undefined`
   * when Redis holds another, or none, or cannot answer.
   */
  async confirmed(name: string, version: string) {
    return this.#documents.get(name)?.confirmed(version);
  }

  #onNotice(message: string): void {
    let notice: Notice;
    try {
      notice = Notice.parse(JSON.parse(message));
    } catch {
      this.#redis.refused('malformed snapshot notice', { channel: this.#channel });
      return;
    }
    this.#documents.get(notice.name)?.noticed(notice.version !== undefined);
  }
}

class SharedDocument<Wire, Value> implements SnapshotSharing<Value> {
  readonly #options: SharedDocumentOptions<Wire, Value>;
  readonly #redis: RedisConnection;
  readonly #channel: string;
  /** The store's record of this replica's stores, by fetch time. */
  readonly #stores: LRUCache<number, StoredSource>;
  readonly #now: () => number;
  /** How long a failure record lives: long enough for the replicas that wait on the fetch. */
  readonly #failureMs: number;
  readonly #keys: { snapshot: string; lock: string; failure: string };
  /** The version of each snapshot this process built or fetched. */
  readonly #versions = new WeakMap<Snapshot<Value>, string>();
  /** The upstream's validators of each snapshot's document, when it sent any. */
  readonly #validators = new WeakMap<Snapshot<Value>, Validators>();
  /** The newest stored snapshot this process has seen, so that a version is built only once. */
  #latest: Snapshot<Value> | undefined;
  /** The one `#latest` replaced: what a change event about something gone is checked against. */
  #previous: Snapshot<Value> | undefined;
  /** Wake-ups of this replica's waits for another's fetch. */
  readonly #wakes = new Set<() => void>();
  readonly #watchers = new Set<(supersedes: (snapshot: Snapshot<Value>) => boolean) => void>();
  /** The check of notices against Redis: whether one runs, and whether another is due. */
  #checking = false;
  #checkDue = false;
  readonly #unregister: () => void;

  constructor(
    options: SharedDocumentOptions<Wire, Value>,
    redis: RedisConnection,
    channel: string,
    stores: LRUCache<number, StoredSource>,
    unregister: () => void,
  ) {
    this.#options = options;
    this.#unregister = unregister;
    this.#redis = redis;
    this.#channel = channel;
    this.#stores = stores;
    this.#now = options.now ?? Date.now;
    this.#failureMs = Math.max(options.failureTtlMs, options.lockMs);
    this.#keys = {
      snapshot: redis.key(`snapshot:${options.name}`),
      lock: redis.key(`lock:${options.name}`),
      failure: redis.key(`failure:${options.name}`),
    };
  }

  get available(): boolean {
    return this.#redis.connected;
  }

  watch(listener: (supersedes: (snapshot: Snapshot<Value>) => boolean) => void): void {
    this.#watchers.add(listener);
  }

  close(): void {
    this.#unregister();
    this.#watchers.clear();
    this.#latest = undefined;
    this.#previous = undefined;
  }

  /** A notice about this document: it wakes the waits, and a new snapshot's is checked. */
  noticed(stored: boolean): void {
    // A wake-up costs a waiter one look at Redis, which it takes every 100 ms anyway.
    for (const wake of this.#wakes) wake();
    if (stored && this.#watchers.size > 0) this.#check();
  }

  async confirmed(version: string): Promise<{ value: unknown; previous: unknown } | undefined> {
    const snapshot = await this.latest().catch(() => undefined);
    if (!snapshot || this.#versions.get(snapshot) !== version) return undefined;
    return { value: snapshot.value, previous: this.#previous?.value };
  }

  async latest(): Promise<Snapshot<Value> | undefined> {
    const known = this.#latest;
    const knownVersion = known ? this.#versions.get(known) : undefined;
    const reply = await this.#read(knownVersion ?? '', MAX_STORED_SNAPSHOT_BYTES);
    if (reply.length === 0) return undefined;
    const stamp = StoredStamp.safeParse(reply.slice(0, 2));
    if (!stamp.success) {
      this.#refuse('malformed snapshot');
      return known;
    }
    const [version, fetchedAt] = stamp.data;
    if (fetchedAt > this.#now() + MAX_CLOCK_SKEW_MS) {
      this.#refuse('snapshot from the future', { fetchedAt: new Date(fetchedAt).toISOString() });
      return known;
    }
    const validators = this.#validatorsIn(reply[4], reply[5]);
    if (version === knownVersion) {
      // Another replica's refetch was answered unchanged (a 304): the same value, confirmed later.
      if (!known || fetchedAt <= known.fetchedAt.getTime()) return known;
      return this.#confirmed(known, version, fetchedAt, validators);
    }
    const [, , kind, body] = reply;
    if (kind === 'large') {
      this.#refuse('oversized snapshot', { bytes: body, maxBytes: MAX_STORED_SNAPSHOT_BYTES });
      return known;
    }
    if (typeof body !== 'string') return known;
    // A stored document that does not pass the schema is as good as absent.
    let wire: Wire;
    try {
      wire = this.#options.schema.parse(JSON.parse(body));
    } catch (error) {
      this.#refuse('invalid snapshot', { err: error });
      return known;
    }
    const snapshot = this.#snapshotOf(
      version,
      fetchedAt,
      this.#options.build(wire, body.length),
      validators,
    );
    if (!this.#latest || fetchedAt >= this.#latest.fetchedAt.getTime()) this.#setLatest(snapshot);
    return snapshot;
  }

  async load(current: Snapshot<Value> | undefined, requestId?: string): Promise<SharedLoad<Value>> {
    const { lockMs, failureTtlMs } = this.#options;
    // The bound on what a lock held by anyone (a stuck replica, or whoever can write to Redis)
    // costs a reader: past it, this replica fetches alone.
    const maxWaitMs = 2 * lockMs;
    const deadline = this.#now() + maxWaitMs;
    let baseline = current;
    let known = (current && this.#versions.get(current)) ?? '';
    let knownAt = known === '' || !current ? 0 : current.fetchedAt.getTime();
    let waitedFor = '';
    for (;;) {
      const token = randomUUID();
      const reply = await acquireLock(
        this.#redis,
        [this.#keys.lock, this.#keys.snapshot, this.#keys.failure],
        [
          token,
          lockMs,
          waitedFor,
          failureTtlMs > 0 ? '1' : '0',
          known,
          this.#failureMs,
          this.#now() + MAX_CLOCK_SKEW_MS,
          MAX_STORED_SNAPSHOT_BYTES,
          knownAt,
        ],
      );
      const [status, detail = ''] = reply;
      if (status === 'failed') throw this.#failureOf(reply);
      if (status === 'acquired') return this.#fetchHolding(token, baseline, requestId);
      if (status === 'stored') {
        // Another replica stored a snapshot (or confirmed this one) since this one looked; one this
        // replica refuses becomes `known`, so that the next look takes the lock and replaces it.
        const stamp = StoredReply.safeParse(reply);
        if (!stamp.success) throw new RedisUnavailableError('a stored snapshot is not readable');
        [, known, knownAt] = stamp.data;
        const stored = await this.latest();
        if (stored && this.#versions.get(stored) === detail) {
          if (!baseline || stored.fetchedAt > baseline.fetchedAt) baseline = stored;
          if (this.#now() - stored.fetchedAt.getTime() < this.#options.ttlMs) {
            return { snapshot: stored, fetched: false };
          }
        }
        continue;
      }
      // Held: wait for its holder's notice, or for the lock to go (released, or expired with a
      // holder that died).
      waitedFor = detail;
      if (this.#now() > deadline) {
        throw new RedisUnavailableError(`waited ${maxWaitMs} ms for another replica's fetch`);
      }
      await this.#waitForNotice();
    }
  }

  async #fetchHolding(
    token: string,
    baseline: Snapshot<Value> | undefined,
    requestId: string | undefined,
  ): Promise<SharedLoad<Value>> {
    const { lockMs, name, retainMs } = this.#options;
    const lock = [this.#keys.lock];
    const renew = setInterval(() => {
      renewOrRelease(this.#redis, lock, [token, lockMs]).catch(() => {});
    }, lockMs / 3);
    renew.unref();
    try {
      const version = baseline && this.#versions.get(baseline);
      const validators = baseline && version ? this.#validators.get(baseline) : undefined;
      let wire: Wire;
      try {
        const fetched = await this.#options.fetch(requestId, validators);
        if (fetched !== UNCHANGED) wire = fetched;
        else {
          const confirmed =
            baseline && version && validators
              ? await this.#confirmStored(baseline, version, validators)
              : undefined;
          if (confirmed) {
            return { snapshot: confirmed, fetched: true, previous: baseline, unchanged: true };
          }
          // Redis no longer holds the version the upstream confirmed (it expired, or another was
          // stored meanwhile): the others could not adopt the confirmation, so it is fetched whole.
          const whole = await this.#options.fetch(requestId);
          if (whole === UNCHANGED) throw new TypeError('an unconditional fetch answered UNCHANGED');
          wire = whole;
        }
      } catch (error) {
        if (error instanceof UpstreamError) {
          const status = error instanceof UpstreamUnavailableError ? (error.status ?? '') : '';
          const notice = JSON.stringify({ name } satisfies Notice);
          await recordFailure(
            this.#redis,
            [this.#keys.failure],
            [token, error.code, status, this.#now(), this.#failureMs, this.#channel, notice],
          ).catch(() => {});
        }
        throw error;
      }
      const fetchedAt = this.#now();
      const body = JSON.stringify(wire);
      const fetchedValidators = this.#options.validatorsOf?.(wire);
      const snapshot = this.#snapshotOf(
        token,
        fetchedAt,
        this.#options.build(wire, body.length),
        fetchedValidators,
      );
      this.#setLatest(snapshot);
      // Over the limit, it is too large for the others to read: each replica fetches it alone.
      if (Buffer.byteLength(body) <= MAX_STORED_SNAPSHOT_BYTES) {
        const notice = JSON.stringify({ name, version: token, fetchedAt } satisfies Notice);
        const stored = await storeSnapshot(
          this.#redis,
          [this.#keys.snapshot, this.#keys.failure],
          [
            token,
            fetchedAt,
            body,
            retainMs,
            this.#channel,
            notice,
            MAX_CLOCK_SKEW_MS,
            fetchedValidators?.etag ?? '',
            fetchedValidators?.lastModified ?? '',
          ],
        )
          // Redis went away meanwhile: this replica keeps what it fetched, as it would alone.
          .catch(() => 0);
        if (stored === 1) this.#stores.set(fetchedAt, { name, version: token });
      }
      return { snapshot, fetched: true, previous: baseline };
    } finally {
      clearInterval(renew);
      await renewOrRelease(this.#redis, lock, [token]).catch(() => {});
    }
  }

  /**
   * Tells the watchers of the snapshot Redis holds now, when a notice says it changed: one read at
   * a time, and no sooner than `NOTICE_CHECK_MS` after the last.
   */
  #check(): void {
    this.#checkDue = true;
    if (this.#checking) return;
    this.#checking = true;
    this.#checkDue = false;
    this.#read('', -1)
      .then(
        (reply) => {
          const stamp = StoredStamp.safeParse(reply.slice(0, 2));
          if (!stamp.success) return;
          const [version, fetchedAt] = stamp.data;
          if (fetchedAt > this.#now() + MAX_CLOCK_SKEW_MS) return;
          for (const listener of this.#watchers) {
            listener(
              (snapshot) =>
                this.#versions.get(snapshot) !== version &&
                snapshot.fetchedAt.getTime() <= fetchedAt,
            );
          }
        },
        () => {},
      )
      .finally(() => {
        setTimeout(() => {
          this.#checking = false;
          if (this.#checkDue) this.#check();
        }, NOTICE_CHECK_MS).unref();
      });
  }

  /** Resolves on the next notice about this document, or after `POLL_MS`. */
  #waitForNotice(): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#wakes.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, POLL_MS);
      this.#wakes.add(wake);
    });
  }

  #read(knownVersion: string, maxBytes: number): Promise<unknown[]> {
    return readSnapshot(this.#redis, [this.#keys.snapshot], [knownVersion, maxBytes]);
  }

  #setLatest(snapshot: Snapshot<Value>): void {
    const latest = this.#latest;
    // A version confirmed again replaces itself: the one before it stays what it replaced.
    const confirmation = latest && this.#versions.get(latest) === this.#versions.get(snapshot);
    if (latest !== snapshot && !confirmation) this.#previous = latest;
    this.#latest = snapshot;
  }

  #snapshotOf(
    version: string,
    fetchedAt: number,
    value: Value,
    validators: Validators | undefined,
  ): Snapshot<Value> {
    const snapshot = { value, fetchedAt: new Date(fetchedAt), stale: false };
    this.#versions.set(snapshot, version);
    if (validators) this.#validators.set(snapshot, validators);
    return snapshot;
  }

  /**
   * `known`'s value, confirmed unchanged at `fetchedAt`: a snapshot of its own (what a read at
   * that time is served, its `fetchedAt` the confirmation's), built from nothing.
   */
  #confirmed(
    known: Snapshot<Value>,
    version: string,
    fetchedAt: number,
    validators: Validators | undefined,
  ): Snapshot<Value> {
    const snapshot = this.#snapshotOf(version, fetchedAt, known.value, validators);
    if (!this.#latest || fetchedAt >= this.#latest.fetchedAt.getTime()) this.#setLatest(snapshot);
    return snapshot;
  }

  /**
   * Records in Redis that the upstream called `baseline` (stored as `version`) unchanged now, for
   * the other replicas to adopt without a rebuild; `undefined` when Redis holds another version or
   * none. When Redis cannot answer, this replica keeps the confirmation, as it would alone.
   */
  async #confirmStored(
    baseline: Snapshot<Value>,
    version: string,
    validators: Validators,
  ): Promise<Snapshot<Value> | undefined> {
    const fetchedAt = this.#now();
    const notice = JSON.stringify({
      name: this.#options.name,
      version,
      fetchedAt,
    } satisfies Notice);
    const confirmed = await confirmSnapshot(
      this.#redis,
      [this.#keys.snapshot, this.#keys.failure],
      [version, fetchedAt, this.#options.retainMs, this.#channel, notice],
    ).catch(() => -1);
    if (confirmed === 0) return undefined;
    return this.#confirmed(baseline, version, fetchedAt, validators);
  }

  /** The validators Redis holds with a snapshot; a malformed one counts as none. */
  #validatorsIn(etag: unknown, lastModified: unknown): Validators | undefined {
    const given = (field: unknown) =>
      typeof field === 'string' && field !== '' ? field : undefined;
    const sentTag = given(etag);
    const sentTime = given(lastModified);
    const tag = entityTag(sentTag);
    // Checked against the answer's time when it was fetched; read back, any HTTP-date will do.
    const time = lastModifiedTime(sentTime, Number.POSITIVE_INFINITY);
    if ((sentTag !== undefined && tag === undefined) || (sentTime !== undefined && !time)) {
      this.#refuse('malformed validators');
    }
    if (tag === undefined && time === undefined) return undefined;
    return { ...(tag !== undefined && { etag: tag }), ...(time && { lastModified: time }) };
  }

  #refuse(kind: string, details: Record<string, unknown> = {}): void {
    this.#redis.refused(kind, { ...details, document: this.#options.name });
  }

  /**
   * The error another replica's fetch failed with, as its own readers got it: the code and status
   * it recorded, and this replica's own words (a record carries no text).
   */
  #failureOf(reply: unknown): Error {
    const parsed = FailureReply.safeParse(reply);
    if (!parsed.success) {
      this.#refuse('malformed failure record');
      return new RedisUnavailableError('a failure stored in redis is not readable');
    }
    const [, code, status, at] = parsed.data;
    const now = this.#now();
    if (at > now + MAX_CLOCK_SKEW_MS || at < now - this.#failureMs - MAX_CLOCK_SKEW_MS) {
      this.#refuse('failure record out of time', { at: new Date(at).toISOString() });
      return new RedisUnavailableError('a failure stored in redis is not of now');
    }
    const { upstream = 'status feed', name: path } = this.#options;
    const endpoint: UpstreamEndpoint = { upstream, method: 'GET', path };
    if (code === 'UPSTREAM_BAD_RESPONSE') {
      return new UpstreamBadResponseError(endpoint, 'not a document of this endpoint');
    }
    return new UpstreamUnavailableError(
      endpoint,
      status === '' ? 'no answer' : `HTTP ${status}`,
      status === '' ? {} : { status: Number(status) },
    );
  }
}
