import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { SnapshotCache } from '../../../src/upstreams/snapshot-cache.js';
import { FeedPoller } from '../../../src/upstreams/status-feed/feed-poller.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A poller over one real snapshot cache whose loads are counted. */
function setUp(ttlMs: number, intervalMs: number) {
  let loads = 0;
  const cache = new SnapshotCache<number>({
    ttlMs,
    maxStaleMs: 10 * ttlMs,
    load: async () => {
      loads += 1;
      return loads;
    },
  });
  const poller = new FeedPoller({
    feed: { poll: () => cache.latest() },
    intervalMs,
    ttlMs,
    logger: pino({ level: 'silent' }),
  });
  return { cache, poller, loads: () => loads };
}

describe('FeedPoller', () => {
  it('polls a document only while it is held, once per TTL however many hold it', async () => {
    const { poller, loads } = setUp(50, 50);
    await sleep(120);
    expect(loads()).toBe(0);

    const releaseFirst = poller.acquire(['summary']);
    const releaseSecond = poller.acquire(['summary', 'upcoming']);
    expect(poller.polling.sort()).toEqual(['summary', 'upcoming']);
    await sleep(520);
    // One cache for both documents here: still at most one load per TTL.
    expect(loads()).toBeGreaterThanOrEqual(4);
    expect(loads()).toBeLessThanOrEqual(12);

    releaseSecond();
    releaseSecond();
    expect(poller.polling).toEqual(['summary']);
    releaseFirst();
    expect(poller.polling).toEqual([]);
    const stopped = loads();
    await sleep(150);
    expect(loads()).toBe(stopped);
  });

  it('waits for the longer of the interval and the TTL between loads', async () => {
    const { poller, loads } = setUp(20, 200);
    const release = poller.acquire(['summary']);
    await sleep(500);
    release();
    expect(loads()).toBeGreaterThanOrEqual(2);
    expect(loads()).toBeLessThanOrEqual(3);
  });

  it('polls nothing once closed', async () => {
    const { poller, loads } = setUp(20, 20);
    poller.close();
    poller.acquire(['summary'])();
    await sleep(100);
    expect(loads()).toBe(0);
  });
});
