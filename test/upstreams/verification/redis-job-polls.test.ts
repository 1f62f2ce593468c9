/**
 * The shared polls of a watched job, over a real redis-server: a replica's lease lasts the pause
 * it waits before its next poll (its back-off), another replica with a shorter pause reads what
 * it stored instead of taking the lease over, the holder polls again whenever it wants to, and a
 * lease longer than the longest pause is replaced.
 */
import { describe, expect, it } from 'vitest';
import type { JobPoll } from '../../../src/upstreams/verification/job-watcher.js';
import { RedisJobPolls } from '../../../src/upstreams/verification/redis-job-polls.js';
import type { WireV2Job } from '../../../src/upstreams/verification/wire-v2.js';
import { useRedisServer } from '../../helpers/redis-server.js';

const INTERVAL_MS = 1_000;
const MAX_LEASE_MS = 300_000;
const ID = '72d12273-0723-448e-a9f6-f7957128efa5';

const redisServer = useRedisServer();

const job = (compilationTime: string | null): WireV2Job => ({
  isJobCompleted: false,
  verificationId: ID,
  jobStartTime: new Date('2026-11-29T10:00:00Z'),
  jobFinishTime: null,
  compilationTime,
  externalVerifications: null,
  contract: null,
  error: null,
});

/** Two replicas' shared polls, and a service whose answers each replica counts. */
async function replicas() {
  const connections = await redisServer.replicas(2);
  return connections.map(({ redis }) => {
    const polls = new RedisJobPolls({ redis, intervalMs: INTERVAL_MS, maxLeaseMs: MAX_LEASE_MS });
    let fetched = 0;
    return {
      redis,
      poll: (answer: WireV2Job, leaseMs: number) =>
        polls.poll(
          ID,
          async (): Promise<JobPoll> => {
            fetched += 1;
            return { job: answer };
          },
          leaseMs,
        ),
      fetched: () => fetched,
      leaseTtl: () => redis.run((client) => client.pttl(redis.key(`verify-job-lease:${ID}`))),
    };
  });
}

describe('RedisJobPolls', () => {
  it("holds the lease for the poller's backed-off pause: a replica with a shorter one reads its poll", async () => {
    const [a, b] = await replicas();
    if (!a || !b) throw new Error('two replicas');
    expect(await a.poll(job(null), 20_000)).toEqual({ job: job(null) });
    expect(a.fetched()).toBe(1);
    expect(await a.leaseTtl()).toBeGreaterThan(INTERVAL_MS);

    // B has just started watching (a 1 s pause): it reads A's poll, and leaves A's lease alone.
    expect(await b.poll(job('1'), INTERVAL_MS)).toEqual({ job: job(null) });
    expect(b.fetched()).toBe(0);
    expect(await a.leaseTtl()).toBeGreaterThan(INTERVAL_MS);

    // A's job changed under it: A polls again at once, within its own lease.
    expect(await a.poll(job('2'), INTERVAL_MS)).toEqual({ job: job('2') });
    expect(a.fetched()).toBe(2);
    expect(await b.poll(job('3'), INTERVAL_MS)).toEqual({ job: job('2') });
    expect(b.fetched()).toBe(0);
  });

  it('replaces a lease longer than the longest pause, or without an expiry', async () => {
    const [a] = await replicas();
    if (!a) throw new Error('one replica');
    const lease = a.redis.key(`verify-job-lease:${ID}`);
    for (const write of [
      () => a.redis.run((client) => client.set(lease, 'someone', 'PX', 2 * MAX_LEASE_MS)),
      () => a.redis.run((client) => client.set(lease, 'someone')),
    ]) {
      await write();
      const before = a.fetched();
      expect(await a.poll(job(null), INTERVAL_MS)).toEqual({ job: job(null) });
      expect(a.fetched()).toBe(before + 1);
      expect(await a.leaseTtl()).toBeLessThanOrEqual(INTERVAL_MS);
    }
  });
});
