import { createHash } from 'node:crypto';
import { RedisUnavailableError } from '../../errors/redis-unavailable-error.js';
import type { RedisConnection } from '../../redis/redis-connection.js';
import { redisScript } from '../../redis/redis-script.js';
import {
  type ClientQuota,
  type ClientQuotaOptions,
  InMemoryClientQuota,
  quotaExceeded,
} from './client-quota.js';

/**
 * Counts one verification in the client's window, opened by its first one (Redis' clock: the
 * replicas' may differ), and answers the count and the ms the window has left. A key as this
 * script never leaves it (not a count, no expiry, or one longer than the window: written by
 * someone else) starts a new window, so that nobody can hold a client back past one window.
 */
const countInWindow = redisScript<[used: number, remainingMs: number]>(`
local remaining = redis.call('PTTL', KEYS[1])
if remaining > tonumber(ARGV[1]) or (remaining ~= -2 and
  (redis.call('TYPE', KEYS[1]).ok ~= 'string' or not tonumber(redis.call('GET', KEYS[1]) or '0'))) then
  redis.call('DEL', KEYS[1])
end
local used = redis.call('INCR', KEYS[1])
remaining = redis.call('PTTL', KEYS[1])
if remaining < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  remaining = tonumber(ARGV[1])
end
return {used, remaining}`);

/**
 * The per-client allowance shared by the replicas: a client gets `limit` verifications per window
 * whichever replicas answer it, with the same answers as `InMemoryClientQuota`. While Redis is
 * unavailable each replica counts alone.
 */
export class RedisClientQuota implements ClientQuota {
  readonly #redis: RedisConnection;
  readonly #options: ClientQuotaOptions;
  readonly #alone: InMemoryClientQuota;

  constructor(options: ClientQuotaOptions & { readonly redis: RedisConnection }) {
    this.#redis = options.redis;
    this.#options = options;
    this.#alone = new InMemoryClientQuota(options);
  }

  async take(client: string): Promise<void> {
    let used: number;
    let remainingMs: number;
    try {
      const keys = [this.#keyOf(client)];
      [used, remainingMs] = await countInWindow(this.#redis, keys, [this.#options.windowMs]);
    } catch (error) {
      if (!(error instanceof RedisUnavailableError)) throw error;
      return this.#alone.take(client);
    }
    if (used > this.#options.limit) throw quotaExceeded(this.#options, remainingMs);
  }

  /** A fixed-size key whatever the client's address (a forwarded header can be long). */
  #keyOf(client: string): string {
    const digest = createHash('sha256').update(client).digest('base64url').slice(0, 22);
    return this.#redis.key(`quota:${digest}`);
  }
}
