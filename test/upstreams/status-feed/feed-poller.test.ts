import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SnapshotCache } from '../../../src/upstreams/snapshot-cache.js';
import { FeedPoller } from '../../../src/upstreams/status-feed/feed-poller.js';

/*
 * On a clock the test controls (vitest's fake timers drive both `setTimeout` and `Date.now`, which
 * the poller and the cache read): every count is exact, whatever else the machine is doing.
 */
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

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
    await vi.advanceTimersByTimeAsync(500);
    expect(loads()).toBe(0);

    const releaseFirst = poller.acquire(['summary']);
    const releaseSecond = poller.acquire(['summary', 'upcoming']);
    expect(poller.polling.sort()).toEqual(['summary', 'upcoming']);
    await vi.advanceTimersByTimeAsync(500);
    // One cache for both documents here: one load per TTL, whichever document's loop asks, and
    // one at the start.
    expect(loads()).toBe(10);

    releaseSecond();
    releaseSecond();
    expect(poller.polling).toEqual(['summary']);
    releaseFirst();
    expect(poller.polling).toEqual([]);
    const stopped = loads();
    await vi.advanceTimersByTimeAsync(500);
    expect(loads()).toBe(stopped);
  });

  it('waits for the longer of the interval and the TTL between loads', async () => {
    const { poller, loads } = setUp(20, 200);
    const release = poller.acquire(['summary']);
    await vi.advanceTimersByTimeAsync(1_000);
    release();
    // At 0, then once per 200 ms interval, not once per 20 ms TTL.
    expect(loads()).toBe(5);
  });

  it('polls nothing once closed', async () => {
    const { poller, loads } = setUp(20, 20);
    poller.close();
    poller.acquire(['summary'])();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loads()).toBe(0);
  });
});
