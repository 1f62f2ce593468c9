import { z } from 'zod';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import type { RedisConnection } from '../redis/redis-connection.js';
import { redisScript } from '../redis/redis-script.js';
import {
  type Confirmation,
  type DocumentBackend,
  type FailedFetch,
  type FetchedSnapshot,
  type LockAnswer,
  type LockAsk,
  MAX_STORED_SNAPSHOT_BYTES,
  type SharedDocument,
  SharedDocuments,
  type StoredSnapshot,
} from './shared-document.js';
import { entityTag, lastModifiedTime, type Validators } from './validators.js';

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

/**
 * The status feed's snapshots, shared by the replicas through Redis (`SharedDocument`: per
 * document and TTL one replica fetches, whichever replica asks). The lock is `SET NX PX` with a
 * token, renewed while its holder fetches; a stored snapshot and a failure are published as
 * notices; the others wait for the notice (or look every 100 ms), then build the snapshot from the
 * stored document, once per version.
 *
 * A notice only wakes waiters (who look at Redis themselves); it supersedes this replica's
 * snapshot only once Redis holds the snapshot it names, checked at most once per
 * `NOTICE_CHECK_MS` per document however many notices arrive.
 */
export class RedisSnapshotStore extends SharedDocuments<RedisDocument> {
  readonly #redis: RedisConnection;
  readonly #channel: string;

  constructor({ redis }: { redis: RedisConnection }) {
    const channel = redis.key('snapshots');
    super((name, now) => new RedisDocument(redis, channel, name, now));
    this.#redis = redis;
    this.#channel = channel;
    redis.subscribe(channel, (message) => this.#onNotice(message), MAX_NOTICE_BYTES);
  }

  #onNotice(message: string): void {
    let notice: Notice;
    try {
      notice = Notice.parse(JSON.parse(message));
    } catch {
      this.#redis.refused('malformed snapshot notice', { channel: this.#channel });
      return;
    }
    const registered = this.registered(notice.name);
    registered?.backend.noticed(notice.version !== undefined, registered.document);
  }
}

/**
 * One document in Redis, as `SharedDocument` uses it. Per document, three keys: `snapshot:<name>`,
 * a hash of the upstream's document as validated JSON (`body`), when it was fetched (`fetchedAt`,
 * ms: or last confirmed unchanged by the upstream, a 304), its `version` (the token of the fetch
 * that stored it) and the upstream's validators of it (`etag`, `lastModified`, when it sent them);
 * `lock:<name>`, the token of the replica fetching it now; `failure:<name>`, the last failed fetch
 * (its token, the error's code and HTTP status, and when it failed: no text). Notices of new
 * snapshots and failures go out on the `snapshots` channel.
 *
 * Whoever can write to Redis can write any of these, so each is input like any other: its size is
 * checked in Redis before it is sent, its shape and times here before it counts, and keys that
 * would hold the replicas back (a lock or failure without expiry) are replaced.
 */
class RedisDocument implements DocumentBackend {
  readonly #redis: RedisConnection;
  readonly #channel: string;
  readonly #name: string;
  readonly #now: () => number;
  readonly #keys: { snapshot: string; lock: string; failure: string };
  /** Wake-ups of this replica's waits for another's fetch. */
  readonly #wakes = new Set<() => void>();
  /** The check of notices against Redis: whether one runs, and whether another is due. */
  #checking = false;
  #checkDue = false;

  constructor(redis: RedisConnection, channel: string, name: string, now: () => number) {
    this.#redis = redis;
    this.#channel = channel;
    this.#name = name;
    this.#now = now;
    this.#keys = {
      snapshot: redis.key(`snapshot:${name}`),
      lock: redis.key(`lock:${name}`),
      failure: redis.key(`failure:${name}`),
    };
  }

  get available(): boolean {
    return this.#redis.connected;
  }

  /** A notice about this document: it wakes the waits, and a new snapshot's is checked. */
  noticed(stored: boolean, document: SharedDocument<unknown, unknown>): void {
    // A wake-up costs a waiter one look at Redis, which it takes every 100 ms anyway.
    for (const wake of this.#wakes) wake();
    if (stored && document.watched) this.#check(document);
  }

  async read(known: string): Promise<StoredSnapshot | 'none' | 'unreadable'> {
    const reply = await readSnapshot(
      this.#redis,
      [this.#keys.snapshot],
      [known, MAX_STORED_SNAPSHOT_BYTES],
    );
    if (reply.length === 0) return 'none';
    const stamp = StoredStamp.safeParse(reply.slice(0, 2));
    if (!stamp.success) {
      this.refused('malformed snapshot');
      return 'unreadable';
    }
    const [version, fetchedAt] = stamp.data;
    if (fetchedAt > this.#now() + MAX_CLOCK_SKEW_MS) {
      this.refused('snapshot from the future', { fetchedAt: new Date(fetchedAt).toISOString() });
      return 'unreadable';
    }
    const validators = this.#validatorsIn(reply[4], reply[5]);
    const [, , kind, body] = reply;
    if (kind === 'large') {
      this.refused('oversized snapshot', { bytes: body, maxBytes: MAX_STORED_SNAPSHOT_BYTES });
      return 'unreadable';
    }
    return {
      version,
      fetchedAt,
      validators,
      body: kind === 'body' && typeof body === 'string' ? body : undefined,
    };
  }

  async acquire(ask: LockAsk): Promise<LockAnswer> {
    const reply = await acquireLock(
      this.#redis,
      [this.#keys.lock, this.#keys.snapshot, this.#keys.failure],
      [
        ask.token,
        ask.lockMs,
        ask.waitedFor,
        ask.answerFailures ? '1' : '0',
        ask.known,
        ask.failureMs,
        this.#now() + MAX_CLOCK_SKEW_MS,
        MAX_STORED_SNAPSHOT_BYTES,
        ask.knownAt,
      ],
    );
    const [status, detail = ''] = reply;
    if (status === 'failed') return this.#failureOf(reply, ask.failureMs);
    if (status === 'acquired') return { status };
    if (status === 'stored') {
      const stamp = StoredReply.safeParse(reply);
      if (!stamp.success) throw new RedisUnavailableError('a stored snapshot is not readable');
      const [, version, fetchedAt] = stamp.data;
      return { status, version, fetchedAt };
    }
    return { status: 'held', holder: detail, wait: () => this.#waitForNotice() };
  }

  renew(token: string, lockMs: number): Promise<unknown> {
    return renewOrRelease(this.#redis, [this.#keys.lock], [token, lockMs]);
  }

  release(token: string): Promise<unknown> {
    return renewOrRelease(this.#redis, [this.#keys.lock], [token]);
  }

  async store(snapshot: FetchedSnapshot): Promise<boolean> {
    const { token, fetchedAt, body, retainMs, validators } = snapshot;
    const notice = JSON.stringify({ name: this.#name, version: token, fetchedAt } satisfies Notice);
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
        validators?.etag ?? '',
        validators?.lastModified ?? '',
      ],
    );
    return stored === 1;
  }

  async confirm({ version, fetchedAt, retainMs }: Confirmation): Promise<boolean> {
    const notice = JSON.stringify({ name: this.#name, version, fetchedAt } satisfies Notice);
    const confirmed = await confirmSnapshot(
      this.#redis,
      [this.#keys.snapshot, this.#keys.failure],
      [version, fetchedAt, retainMs, this.#channel, notice],
    );
    return confirmed !== 0;
  }

  fail({ token, code, status, at, ttlMs }: FailedFetch): Promise<unknown> {
    const notice = JSON.stringify({ name: this.#name } satisfies Notice);
    return recordFailure(
      this.#redis,
      [this.#keys.failure],
      [token, code, status ?? '', at, ttlMs, this.#channel, notice],
    );
  }

  refused(kind: string, details: Record<string, unknown> = {}): void {
    this.#redis.refused(kind, { ...details, document: this.#name });
  }

  /**
   * Tells the watchers of the snapshot Redis holds now, when a notice says it changed: one read at
   * a time, and no sooner than `NOTICE_CHECK_MS` after the last.
   */
  #check(document: SharedDocument<unknown, unknown>): void {
    this.#checkDue = true;
    if (this.#checking) return;
    this.#checking = true;
    this.#checkDue = false;
    readSnapshot(this.#redis, [this.#keys.snapshot], ['', -1])
      .then(
        (reply) => {
          const stamp = StoredStamp.safeParse(reply.slice(0, 2));
          if (!stamp.success) return;
          const [version, fetchedAt] = stamp.data;
          if (fetchedAt > this.#now() + MAX_CLOCK_SKEW_MS) return;
          document.supersede(version, fetchedAt);
        },
        () => {},
      )
      .finally(() => {
        setTimeout(() => {
          this.#checking = false;
          if (this.#checkDue) this.#check(document);
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
      this.refused('malformed validators');
    }
    if (tag === undefined && time === undefined) return undefined;
    return { ...(tag !== undefined && { etag: tag }), ...(time && { lastModified: time }) };
  }

  /**
   * The failure another replica's fetch recorded, as `acquireLock` answered it; a record not of its
   * shape, or not of now, is refused, and the wait fails as if Redis could not answer.
   */
  #failureOf(reply: unknown, failureMs: number): LockAnswer {
    const parsed = FailureReply.safeParse(reply);
    if (!parsed.success) {
      this.refused('malformed failure record');
      throw new RedisUnavailableError('a failure stored in redis is not readable');
    }
    const [status, code, httpStatus, at] = parsed.data;
    const now = this.#now();
    if (at > now + MAX_CLOCK_SKEW_MS || at < now - failureMs - MAX_CLOCK_SKEW_MS) {
      this.refused('failure record out of time', { at: new Date(at).toISOString() });
      throw new RedisUnavailableError('a failure stored in redis is not of now');
    }
    return { status, code, httpStatus: httpStatus === '' ? undefined : Number(httpStatus) };
  }
}
