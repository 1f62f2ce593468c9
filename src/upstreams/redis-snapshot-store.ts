import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import { UpstreamBadResponseError } from '../errors/upstream-bad-response-error.js';
import { isUpstreamError, type UpstreamEndpoint } from '../errors/upstream-error.js';
import { UpstreamUnavailableError } from '../errors/upstream-unavailable-error.js';
import type { RedisConnection } from '../redis/redis-connection.js';
import { RedisScript } from '../redis/redis-script.js';
import type { SharedLoad, Snapshot, SnapshotSharing } from './snapshot-cache.js';

/*
 * Per document, three keys: `snapshot:<name>`, a hash of the upstream's document as validated
 * JSON (`body`), when it was fetched (`fetchedAt`, ms) and its `version` (the token of the fetch
 * that stored it); `lock:<name>`, the token of the replica fetching it now; `failure:<name>`, the
 * last failed fetch (its token and the upstream error). Notices of new snapshots and failures go
 * out on the `snapshots` channel.
 */

/** Takes the lock, unless a newer snapshot was stored or a failure must be answered. */
const ACQUIRE = new RedisScript(`
local failureToken = redis.call('HGET', KEYS[3], 'token')
if failureToken and (ARGV[4] == '1' or failureToken == ARGV[3]) then
  return {'failed', redis.call('HGET', KEYS[3], 'error')}
end
local version = redis.call('HGET', KEYS[2], 'version')
if version and version ~= ARGV[5] then return {'stored', version} end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'acquired'} end
return {'held', redis.call('GET', KEYS[1]) or ''}`);

/** The stored snapshot: its version and fetch time, and its body when the version is not known. */
const READ = new RedisScript(`
local stored = redis.call('HMGET', KEYS[1], 'version', 'fetchedAt')
if not stored[1] then return {} end
if stored[1] == ARGV[1] then return {stored[1], stored[2]} end
return {stored[1], stored[2], redis.call('HGET', KEYS[1], 'body')}`);

/** Stores a snapshot unless a newer one is there, clears the failure, and tells the replicas. */
const STORE = new RedisScript(`
local stored = tonumber(redis.call('HGET', KEYS[1], 'fetchedAt') or '0')
if stored > tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'fetchedAt', ARGV[2], 'body', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('DEL', KEYS[2])
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1`);

/** Records a failed fetch for the replicas waiting on it (and, for a failure TTL, the others). */
const FAIL = new RedisScript(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'error', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1`);

/** Keeps the lock while its holder still fetches. */
const RENEW = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`);

const RELEASE = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`);

export interface SharedDocumentOptions<Wire, Value> {
  /** Names the document in keys and notices (its path). */
  readonly name: string;
  /** Fetches the upstream's document. */
  readonly fetch: (requestId?: string) => Promise<Wire>;
  /**
   * Checks a stored document as the upstream's answer was checked: what comes out of Redis is
   * input like any other. It must accept the JSON of its own output.
   */
  readonly schema: z.ZodType<Wire>;
  /** Indexes a document into the value every request reads (once per version per replica). */
  readonly build: (wire: Wire) => Value;
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
   * How long a replica waits for another's fetch before fetching alone.
   * @default 10 × lockMs
   */
  readonly maxWaitMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/** How often a waiting replica looks at the lock, when no notice wakes it first. */
const POLL_MS = 100;

interface Notice {
  readonly name: string;
  /** A new snapshot's version and fetch time; a failure's notice has neither. */
  readonly version?: string;
  readonly fetchedAt?: number;
}

/** An upstream error as the replicas that waited for it rebuild it. */
interface FailureRecord {
  readonly code: 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_BAD_RESPONSE';
  readonly message: string;
  readonly endpoint: UpstreamEndpoint;
  readonly status?: number;
}

/**
 * The status feed's snapshots, shared by the replicas through Redis. Per document and TTL one
 * replica fetches, whichever replica asks: it holds the document's lock (`SET NX PX` with a
 * token, renewed while it fetches), stores the validated document with its fetch time, and
 * publishes a notice; the others wait for the notice (or look every 100 ms), then build the
 * snapshot from the stored document, once per version. A fetch that fails is recorded for the
 * replicas that waited for it, so they answer its error instead of asking the upstream in turn.
 */
export class RedisSnapshotStore {
  readonly #redis: RedisConnection;
  readonly #logger: Logger;
  readonly #channel: string;
  /** Per document: wake-ups of the replicas' waits, and the caches' watchers. */
  readonly #waiting = new Map<string, Set<() => void>>();
  readonly #watchers = new Map<string, Set<(notice: Required<Notice>) => void>>();

  constructor({ redis, logger }: { redis: RedisConnection; logger: Logger }) {
    this.#redis = redis;
    this.#logger = logger;
    this.#channel = redis.key('snapshots');
    redis.subscribe(this.#channel, (message) => this.#onNotice(message));
  }

  /** The sharing of one document, for its `SnapshotCache`. */
  document<Wire, Value>(options: SharedDocumentOptions<Wire, Value>): SnapshotSharing<Value> {
    return new SharedDocument(options, {
      redis: this.#redis,
      logger: this.#logger,
      channel: this.#channel,
      waitForNotice: (ms) => this.#waitForNotice(options.name, ms),
      watch: (listener) => this.#watch(options.name, listener),
    });
  }

  #onNotice(message: string): void {
    let notice: Notice;
    try {
      notice = JSON.parse(message) as Notice;
    } catch {
      return;
    }
    if (typeof notice?.name !== 'string') return;
    for (const wake of this.#waiting.get(notice.name) ?? []) wake();
    if (typeof notice.version === 'string' && typeof notice.fetchedAt === 'number') {
      for (const watcher of this.#watchers.get(notice.name) ?? []) {
        watcher(notice as Required<Notice>);
      }
    }
  }

  #waitForNotice(name: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let wakes = this.#waiting.get(name);
      if (!wakes) {
        wakes = new Set();
        this.#waiting.set(name, wakes);
      }
      const waiting = wakes;
      const wake = () => {
        clearTimeout(timer);
        waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      waiting.add(wake);
    });
  }

  #watch(name: string, listener: (notice: Required<Notice>) => void): void {
    let watchers = this.#watchers.get(name);
    if (!watchers) {
      watchers = new Set();
      this.#watchers.set(name, watchers);
    }
    watchers.add(listener);
  }
}

interface DocumentContext {
  readonly redis: RedisConnection;
  readonly logger: Logger;
  readonly channel: string;
  waitForNotice(ms: number): Promise<void>;
  watch(listener: (notice: Required<Notice>) => void): void;
}

class SharedDocument<Wire, Value> implements SnapshotSharing<Value> {
  readonly #options: SharedDocumentOptions<Wire, Value>;
  readonly #context: DocumentContext;
  readonly #now: () => number;
  readonly #keys: { snapshot: string; lock: string; failure: string };
  /** The version of each snapshot this process built or fetched. */
  readonly #versions = new WeakMap<Snapshot<Value>, string>();
  /** The newest stored snapshot this process has seen, so that a version is built only once. */
  #latest: Snapshot<Value> | undefined;

  constructor(options: SharedDocumentOptions<Wire, Value>, context: DocumentContext) {
    this.#options = options;
    this.#context = context;
    this.#now = options.now ?? Date.now;
    const { redis } = context;
    this.#keys = {
      snapshot: redis.key(`snapshot:${options.name}`),
      lock: redis.key(`lock:${options.name}`),
      failure: redis.key(`failure:${options.name}`),
    };
  }

  get available(): boolean {
    return this.#context.redis.connected;
  }

  watch(listener: (supersedes: (snapshot: Snapshot<Value>) => boolean) => void): void {
    this.#context.watch(({ version, fetchedAt }) =>
      listener(
        (snapshot) =>
          this.#versions.get(snapshot) !== version && snapshot.fetchedAt.getTime() <= fetchedAt,
      ),
    );
  }

  async latest(): Promise<Snapshot<Value> | undefined> {
    const known = this.#latest;
    const knownVersion = known ? this.#versions.get(known) : undefined;
    const reply = (await this.#context.redis.run((redis) =>
      READ.run(redis, [this.#keys.snapshot], [knownVersion ?? '']),
    )) as string[];
    const [version, fetchedAt, body] = reply;
    if (version === undefined || fetchedAt === undefined) return undefined;
    if (version === knownVersion) return known;
    if (body === undefined) return undefined;
    const snapshot = this.#adopt(version, Number(fetchedAt), body);
    return snapshot ?? known;
  }

  async load(current: Snapshot<Value> | undefined, requestId?: string): Promise<SharedLoad<Value>> {
    const { lockMs, failureTtlMs } = this.#options;
    const maxWaitMs = this.#options.maxWaitMs ?? 10 * lockMs;
    const deadline = this.#now() + maxWaitMs;
    let baseline = current;
    let known = (current && this.#versions.get(current)) ?? '';
    let waitedFor = '';
    for (;;) {
      const token = randomUUID();
      const [status, detail = ''] = (await this.#context.redis.run((redis) =>
        ACQUIRE.run(
          redis,
          [this.#keys.lock, this.#keys.snapshot, this.#keys.failure],
          [token, lockMs, waitedFor, failureTtlMs > 0 ? '1' : '0', known],
        ),
      )) as [string, string?];
      if (status === 'failed') throw failureOf(detail);
      if (status === 'acquired') return this.#fetchHolding(token, baseline, requestId);
      if (status === 'stored') {
        // Another replica stored a snapshot since this one looked.
        known = detail;
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
      await this.#context.waitForNotice(POLL_MS);
    }
  }

  async #fetchHolding(
    token: string,
    baseline: Snapshot<Value> | undefined,
    requestId: string | undefined,
  ): Promise<SharedLoad<Value>> {
    const { redis, channel } = this.#context;
    const { lockMs, failureTtlMs, name } = this.#options;
    const renew = setInterval(() => {
      redis.run((client) => RENEW.run(client, [this.#keys.lock], [token, lockMs])).catch(() => {});
    }, lockMs / 3);
    renew.unref();
    try {
      let wire: Wire;
      try {
        wire = await this.#options.fetch(requestId);
      } catch (error) {
        const record = failureRecordOf(error);
        if (record) {
          await redis
            .run((client) =>
              FAIL.run(
                client,
                [this.#keys.failure],
                [
                  token,
                  JSON.stringify(record),
                  Math.max(failureTtlMs, lockMs),
                  channel,
                  JSON.stringify({ name } satisfies Notice),
                ],
              ),
            )
            .catch(() => {});
        }
        throw error;
      }
      const fetchedAt = this.#now();
      const snapshot = this.#snapshotOf(token, fetchedAt, this.#options.build(wire));
      this.#latest = snapshot;
      await redis
        .run((client) =>
          STORE.run(
            client,
            [this.#keys.snapshot, this.#keys.failure],
            [
              token,
              fetchedAt,
              JSON.stringify(wire),
              this.#options.retainMs,
              channel,
              JSON.stringify({ name, version: token, fetchedAt } satisfies Notice),
            ],
          ),
        )
        // Redis went away meanwhile: this replica keeps what it fetched, as it would alone.
        .catch(() => {});
      return { snapshot, fetched: true, previous: baseline };
    } finally {
      clearInterval(renew);
      await redis.run((client) => RELEASE.run(client, [this.#keys.lock], [token])).catch(() => {});
    }
  }

  /** Builds a stored document; one that does not pass the schema is as good as absent. */
  #adopt(version: string, fetchedAt: number, body: string): Snapshot<Value> | undefined {
    let wire: Wire;
    try {
      wire = this.#options.schema.parse(JSON.parse(body));
    } catch (error) {
      this.#context.logger.warn(
        { err: error, document: this.#options.name },
        'a snapshot stored in redis is not a valid document; fetching it again',
      );
      return undefined;
    }
    const snapshot = this.#snapshotOf(version, fetchedAt, this.#options.build(wire));
    if (!this.#latest || fetchedAt >= this.#latest.fetchedAt.getTime()) this.#latest = snapshot;
    return snapshot;
  }

  #snapshotOf(version: string, fetchedAt: number, value: Value): Snapshot<Value> {
    const snapshot = { value, fetchedAt: new Date(fetchedAt), stale: false };
    this.#versions.set(snapshot, version);
    return snapshot;
  }
}

function failureRecordOf(error: unknown): FailureRecord | undefined {
  if (!isUpstreamError(error)) return undefined;
  return {
    code: error.code,
    message: error.message,
    endpoint: error.endpoint,
    ...(error instanceof UpstreamUnavailableError && error.status !== undefined
      ? { status: error.status }
      : {}),
  };
}

/** The error another replica's fetch failed with, as its own readers got it. */
function failureOf(text: string): Error {
  let record: FailureRecord;
  try {
    record = JSON.parse(text) as FailureRecord;
  } catch {
    return new RedisUnavailableError('a failure stored in redis is not readable');
  }
  const error =
    record.code === 'UPSTREAM_BAD_RESPONSE'
      ? new UpstreamBadResponseError(record.endpoint, '')
      : new UpstreamUnavailableError(
          record.endpoint,
          '',
          record.status === undefined ? {} : { status: record.status },
        );
  error.message = record.message;
  return error;
}
