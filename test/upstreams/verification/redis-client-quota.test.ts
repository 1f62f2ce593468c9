/** The verifyContract allowance shared by replicas, over a real redis-server. */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../../src/errors/rate-limited-error.js';
import { InMemoryClientQuota } from '../../../src/upstreams/verification/client-quota.js';
import { RedisClientQuota } from '../../../src/upstreams/verification/redis-client-quota.js';
import { eventually } from '../../helpers/eventually.js';
import { useRedisServer } from '../../helpers/redis-server.js';

const OPTIONS = { limit: 2, windowMs: 60_000 };
/**
 * Past the test connections' 200 ms: a command that timed out on a loaded machine would be counted
 * alone, as it should be, which is not what these tests count on. None of them pauses Redis.
 */
const COMMAND_TIMEOUT = { commandTimeoutMs: 5_000 };

const redisServer = useRedisServer();

async function quotas(count: number) {
  const connections = await redisServer.replicas(count, COMMAND_TIMEOUT);
  return connections.map(({ redis }) => new RedisClientQuota({ ...OPTIONS, redis }));
}

async function refusal(take: () => unknown): Promise<RateLimitedError> {
  try {
    await take();
  } catch (error) {
    if (error instanceof RateLimitedError) return error;
    throw error;
  }
  throw new Error('the take was allowed');
}

describe('RedisClientQuota', () => {
  it('answers as the in-memory allowance does', async () => {
    const [shared] = await quotas(1);
    if (!shared) throw new Error('one quota');
    const alone = new InMemoryClientQuota(OPTIONS);
    for (const quota of [shared, alone]) {
      await quota.take('203.0.113.1');
      await quota.take('203.0.113.1');
      await quota.take('203.0.113.2');
    }
    const [fromRedis, fromMemory] = await Promise.all([
      refusal(() => shared.take('203.0.113.1')),
      refusal(() => alone.take('203.0.113.1')),
    ]);
    expect(fromRedis.message).toBe(fromMemory.message);
    expect(fromRedis.retryAfterSeconds).toBe(60);
    expect(fromMemory.retryAfterSeconds).toBe(60);
  });

  it("counts a client's verifications across replicas, atomically", async () => {
    const [a, b, c] = await quotas(3);
    if (!a || !b || !c) throw new Error('three quotas');
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => [a, b, c][i % 3]?.take('198.51.100.7')),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(OPTIONS.limit);
    expect(
      results.every(
        (result) => result.status === 'fulfilled' || result.reason instanceof RateLimitedError,
      ),
    ).toBe(true);
  });

  it('runs its script again once Redis has forgotten it (SCRIPT FLUSH, a restart)', async () => {
    const [quota] = await quotas(1);
    if (!quota) throw new Error('one quota');
    await quota.take('192.0.2.9');
    const admin = new Redis(redisServer.server.url);
    try {
      await admin.script('FLUSH');
    } finally {
      admin.disconnect();
    }
    // Still counted in Redis: a replica counting alone would allow two more.
    await quota.take('192.0.2.9');
    await refusal(() => quota.take('192.0.2.9'));
  });

  it('counts alone while Redis is down, and never fails for it', async () => {
    const [connection] = await redisServer.replicas(1, COMMAND_TIMEOUT);
    if (!connection) throw new Error('one connection');
    const a = new RedisClientQuota({ ...OPTIONS, redis: connection.redis });
    await a.take('192.0.2.1');
    await a.take('192.0.2.1');
    await redisServer.server.kill();
    await eventually(() => !connection.redis.connected);
    // This replica's own count starts afresh: two more, then refused.
    await a.take('192.0.2.1');
    await a.take('192.0.2.1');
    await refusal(() => a.take('192.0.2.1'));
  });
});
