import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { UpstreamUnavailableError } from '../../errors/upstream-unavailable-error.js';
import type { RedisConnection } from '../../redis/redis-connection.js';
import { redisScript } from '../../redis/redis-script.js';
import { MAX_CLOCK_SKEW_MS } from '../redis-snapshot-store.js';
import { jobEndpoint } from './apiv2-errors.js';
import type { JobPoll } from './job-watcher.js';
import { WireV2Job } from './wire-v2.js';

/*
 * Per watched job, two keys: `verify-job-lease:<id>`, held by the replica that polls the job for
 * the pause it waits before its next poll (`SET NX PX`: from `VERIFY_WATCH_INTERVAL_MS` up to the
 * back-off's ceiling), and `verify-job:<id>`, what that poll got: the job as the service answered
 * it, or the failure's status (no text), with when it was polled and for how long it stands.
 * Whoever can write to Redis can write these: a lease without an expiry or longer than the
 * longest pause is replaced, and a state is checked for its size in Redis and for its shape and
 * time here.
 */

/**
 * Takes the job's lease for this pause (or takes it again when this replica holds it: the pause
 * it took it for may have been cut short by a change), or answers what the holder stored: its
 * size when over the limit, else the value.
 */
const leaseOrRead = redisScript(`
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -1 or ttl > tonumber(ARGV[4]) or (ttl ~= -2 and redis.call('TYPE', KEYS[1]).ok ~= 'string') then
  redis.call('DEL', KEYS[1])
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'lead'} end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {'lead'}
end
if redis.call('TYPE', KEYS[2]).ok ~= 'string' then return {'follow'} end
local size = redis.call('STRLEN', KEYS[2])
if size > tonumber(ARGV[3]) then return {'follow', 'large', size} end
return {'follow', 'state', redis.call('GET', KEYS[2])}`);

/**
 * The largest job state shared: a job carries the bytecodes it compared and the compiler's
 * errors, which real contracts keep well below this. A larger one is not stored, and each
 * replica polls it alone.
 */
export const MAX_SHARED_JOB_BYTES = 1024 * 1024;

/** `ms`: the lease it was polled under (absent from a state stored before the back-off). */
const When = { at: z.number().int().nonnegative(), ms: z.number().int().positive().optional() };

const StoredPoll = z.union([
  z.object({ ...When, job: WireV2Job.nullable() }),
  z.object({
    ...When,
    failure: z.object({ status: z.number().int().min(100).max(599).nullable() }),
  }),
]);

const Reply = z.union([
  z.tuple([z.literal('lead')]),
  z.tuple([z.literal('follow')]),
  z.tuple([z.literal('follow'), z.literal('large'), z.number()]),
  z.tuple([z.literal('follow'), z.literal('state'), z.string()]),
]);

export interface RedisJobPollsOptions {
  readonly redis: RedisConnection;
  /** `VERIFY_WATCH_INTERVAL_MS`: the shortest lease. */
  readonly intervalMs: number;
  /** The longest pause between polls of a job (`VERIFY_WATCH_STALE_INTERVAL_MS`): the longest lease. */
  readonly maxLeaseMs: number;
}

/**
 * One poll of a job per pause for all the replicas: the first to ask takes the job's lease for
 * the pause it waits before its next poll, polls the service and stores what it got; the others
 * read that until the lease ends. As each replica's pauses grow while the job does not change, the
 * lease follows the poller's pause: a longer lease than the base interval keeps the replicas
 * sharing when their backed-off polls fall seconds apart, and tells a follower nothing staler than
 * its own back-off already accepts. While Redis is unavailable, `poll` fails with
 * `RedisUnavailableError` and each replica polls alone.
 */
export class RedisJobPolls {
  readonly #redis: RedisConnection;
  readonly #intervalMs: number;
  readonly #maxLeaseMs: number;
  readonly #token = randomUUID();

  constructor({ redis, intervalMs, maxLeaseMs }: RedisJobPollsOptions) {
    this.#redis = redis;
    this.#intervalMs = intervalMs;
    this.#maxLeaseMs = Math.max(intervalMs, maxLeaseMs);
  }

  /**
   * This pause's poll of job `id`: `fetch`ed here when this replica takes the lease (for
   * `leaseMs`, this replica's pause before its next poll), else what the holder stored;
   * `undefined` while the holder has stored nothing yet.
   */
  async poll(
    id: string,
    fetch: () => Promise<JobPoll>,
    leaseMs: number = this.#intervalMs,
  ): Promise<JobPoll | undefined> {
    const lease = this.#redis.key(`verify-job-lease:${id}`);
    const state = this.#redis.key(`verify-job:${id}`);
    const ms = this.#leaseOf(leaseMs);
    const args = [this.#token, ms, MAX_SHARED_JOB_BYTES, this.#maxLeaseMs];
    const reply = Reply.safeParse(await leaseOrRead(this.#redis, [lease, state], args));
    if (!reply.success) {
      this.#redis.refused('malformed job poll reply', { job: id });
      return undefined;
    }
    const [role, kind, value] = reply.data;
    if (role === 'lead') {
      const polled = await fetch();
      await this.#store(state, polled, ms);
      return polled;
    }
    if (kind === 'large') {
      this.#redis.refused('oversized job state', { job: id, bytes: value });
      // Too large to share: this replica polls it alone.
      return fetch();
    }
    return kind === 'state' ? this.#read(id, value) : undefined;
  }

  /** A lease's length, within the bounds whatever asks (or whatever Redis holds). */
  #leaseOf(ms: number): number {
    return Math.min(Math.max(Math.round(ms), this.#intervalMs), this.#maxLeaseMs);
  }

  async #store(key: string, polled: JobPoll, ms: number): Promise<void> {
    const at = Date.now();
    const failed = 'failure' in polled && polled.failure;
    const status = failed instanceof UpstreamUnavailableError ? (failed.status ?? null) : null;
    const value = JSON.stringify(
      'job' in polled ? { at, ms, job: polled.job } : { at, ms, failure: { status } },
    );
    if (Buffer.byteLength(value) > MAX_SHARED_JOB_BYTES) return;
    // Kept three leases: past two a follower no longer takes it.
    await this.#redis
      .run((redis) => redis.set(key, value, 'PX', 3 * ms))
      // Redis went away meanwhile: this replica keeps what it polled, as it would alone.
      .catch(() => {});
  }

  #read(id: string, text: string): JobPoll | undefined {
    let stored: z.output<typeof StoredPoll>;
    try {
      stored = StoredPoll.parse(JSON.parse(text));
    } catch (error) {
      this.#redis.refused('invalid job state', { job: id, err: error });
      return undefined;
    }
    if (stored.at > Date.now() + MAX_CLOCK_SKEW_MS) {
      this.#redis.refused('job state from the future', { job: id });
      return undefined;
    }
    // Left from an earlier watch: the holder's poll of this lease is on its way.
    if (Date.now() - stored.at > 2 * this.#leaseOf(stored.ms ?? this.#intervalMs)) return undefined;
    if ('job' in stored) return { job: stored.job };
    const { status } = stored.failure;
    // A stored failure carries no text: this replica's own words, as for the feed's failures.
    return {
      failure: new UpstreamUnavailableError(
        jobEndpoint(id),
        status === null ? 'no usable answer' : `it answered HTTP ${status}`,
        status === null ? {} : { status },
      ),
    };
  }
}
