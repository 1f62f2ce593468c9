import { describe, expect, it } from 'vitest';
import { SnapshotCache } from '../../src/upstreams/snapshot-cache.js';

/** A cache whose loads wait until the test lets each one land. */
function setUp() {
  const pending: ((value: string) => void)[] = [];
  const failing: ((error: Error) => void)[] = [];
  let loads = 0;
  const loaded: [string | undefined, string][] = [];
  const cache = new SnapshotCache<string>({
    ttlMs: 60_000,
    maxStaleMs: 300_000,
    load: () => {
      loads += 1;
      return new Promise<string>((resolve, reject) => {
        pending.push(resolve);
        failing.push(reject);
      });
    },
    onLoaded: (previous, next) => loaded.push([previous?.value, next.value]),
  });
  /** Lets the oldest load under way land with `value`, and what follows it run. */
  const land = async (value: string) => {
    failing.shift();
    pending.shift()?.(value);
    await new Promise<void>((resolve) => setImmediate(resolve));
  };
  return { cache, loaded, pending, failing, land, loads: () => loads };
}

describe('SnapshotCache refetch', () => {
  it('fetches a fresh snapshot again at once, and tells onLoaded', async () => {
    const t = setUp();
    const first = t.cache.get();
    await t.land('v1');
    await first;
    const refetched = t.cache.refetch();
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(t.loads()).toBe(2);
    await t.land('v2');
    await refetched;
    expect((await t.cache.get()).value).toBe('v2');
    expect(t.loaded).toEqual([
      [undefined, 'v1'],
      ['v1', 'v2'],
    ]);
  });

  it('follows a load under way with one more, shared by every call meanwhile', async () => {
    const t = setUp();
    const first = t.cache.get();
    await t.land('v1');
    await first;
    // A reader's refetch under way (a read past the TTL would start one the same way).
    const underWay = t.cache.refetch();
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(t.loads()).toBe(2);
    const calls = Array.from({ length: 20 }, () => t.cache.refetch());
    // The load under way started before these calls: it may have read the old document.
    await t.land('v2');
    await underWay;
    expect(t.loads()).toBe(3);
    await t.land('v3');
    await Promise.all(calls);
    expect(t.loads()).toBe(3);
    expect((await t.cache.get()).value).toBe('v3');
  });

  it('fetches nothing for a document nobody read', async () => {
    const t = setUp();
    await t.cache.refetch();
    expect(t.loads()).toBe(0);
  });

  it('keeps the last snapshot when the refetch fails, tells onLoaded nothing, and resolves', async () => {
    const t = setUp();
    const first = t.cache.get();
    await t.land('v1');
    await first;
    const refetched = t.cache.refetch();
    await new Promise<void>((resolve) => setImmediate(resolve));
    t.pending.shift();
    t.failing.shift()?.(new Error('feed down'));
    await refetched;
    // Still within its TTL: served as it was.
    expect((await t.cache.get()).value).toBe('v1');
    expect(t.loaded).toEqual([[undefined, 'v1']]);
  });
});
