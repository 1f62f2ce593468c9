import { describe, expect, it } from 'vitest';
import { SnapshotCache, type SnapshotCacheEvent } from '../../src/upstreams/snapshot-cache.js';

/** Lets a load under way land: the tests' loads settle at once, so one turn of the event loop. */
const landed = () => new Promise<void>((resolve) => setImmediate(resolve));

function setUp(options: { ttlMs: number; maxStaleMs: number }) {
  let now = 1_000_000;
  let calls = 0;
  let next: () => Promise<string> = async () => `v${calls}`;
  const events: SnapshotCacheEvent[] = [];
  const loaded: [string | undefined, string][] = [];
  const cache = new SnapshotCache<string>({
    ...options,
    now: () => now,
    load: () => {
      calls += 1;
      return next();
    },
    onEvent: (event) => events.push(event),
    onLoaded: (previous, next) => {
      expect(cache.current).toBe(next);
      loaded.push([previous?.value, next.value]);
    },
  });
  return {
    cache,
    events,
    loaded,
    calls: () => calls,
    advance: (ms: number) => {
      now += ms;
    },
    willLoad: (load: () => Promise<string>) => {
      next = load;
    },
  };
}

describe('SnapshotCache', () => {
  it('serves one snapshot within the TTL and loads again after it', async () => {
    const t = setUp({ ttlMs: 100, maxStaleMs: 0 });
    const first = await t.cache.get();
    t.advance(99);
    expect(await t.cache.get()).toBe(first);
    t.advance(1);
    const second = await t.cache.get();
    expect(second.value).toBe('v2');
    expect(second.fetchedAt.getTime() - first.fetchedAt.getTime()).toBe(100);
    expect(t.events).toEqual(['miss', 'hit', 'miss']);
  });

  it('coalesces concurrent reads into one load', async () => {
    const t = setUp({ ttlMs: 100, maxStaleMs: 0 });
    const results = await Promise.all(Array.from({ length: 50 }, () => t.cache.get()));
    expect(t.calls()).toBe(1);
    expect(new Set(results).size).toBe(1);
    expect(t.events.filter((e) => e === 'coalesced')).toHaveLength(49);
  });

  it('shares a failure with every waiting reader and tries again on the next read', async () => {
    const t = setUp({ ttlMs: 100, maxStaleMs: 0 });
    t.willLoad(async () => {
      throw new Error('down');
    });
    const results = await Promise.allSettled([t.cache.get(), t.cache.get()]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    t.willLoad(async () => 'back');
    expect((await t.cache.get()).value).toBe('back');
    expect(t.calls()).toBe(2);
  });

  it('stands in the last good snapshot, marked stale, within maxStaleMs of its fetch', async () => {
    const t = setUp({ ttlMs: 10, maxStaleMs: 1_000 });
    const good = await t.cache.get();
    t.willLoad(async () => {
      throw new Error('down');
    });
    t.advance(1_000);
    // Served at once while the refetch runs; once it has failed, the same data marked stale.
    expect(await t.cache.get()).toBe(good);
    await landed();
    const stale = await t.cache.get();
    expect(stale).toMatchObject({ value: good.value, fetchedAt: good.fetchedAt, stale: true });
    expect(t.cache.current).toBe(good);
    await landed();
    t.advance(1);
    await expect(t.cache.get()).rejects.toThrow('down');
  });

  it('never makes a reader wait while a usable snapshot exists (stale-while-revalidate)', async () => {
    const t = setUp({ ttlMs: 10, maxStaleMs: 1_000 });
    const good = await t.cache.get();
    let finish: (value: string) => void = () => {};
    t.willLoad(() => new Promise<string>((resolve) => (finish = resolve)));
    t.advance(20);
    // The upstream hangs: readers still get the last snapshot, at once, and one refetch runs.
    expect(await t.cache.get()).toBe(good);
    expect(await t.cache.get()).toBe(good);
    expect(t.events).toEqual(['miss', 'revalidating', 'revalidating']);
    finish('new');
    await landed();
    expect((await t.cache.get()).value).toBe('new');
  });
});

describe('SnapshotCache onLoaded', () => {
  it('is told once per good load, with the snapshot it replaces, and never of an outage', async () => {
    const t = setUp({ ttlMs: 100, maxStaleMs: 1_000 });
    await Promise.all([t.cache.get(), t.cache.get(), t.cache.get()]);
    expect(t.loaded).toEqual([[undefined, 'v1']]);

    t.advance(100);
    t.willLoad(async () => {
      throw new Error('feed down');
    });
    // The read past the TTL serves the last snapshot and starts a refetch; wait for it to fail.
    const standIn = await t.cache.latest();
    expect(standIn.stale).toBe(true);
    t.advance(100);
    await Promise.all([t.cache.get(), t.cache.latest()]);
    expect(t.loaded).toEqual([[undefined, 'v1']]);

    t.willLoad(async () => `v${t.calls()}`);
    t.advance(100);
    await t.cache.latest();
    expect(t.loaded).toEqual([
      [undefined, 'v1'],
      ['v1', 'v4'],
    ]);
  });
});

describe('SnapshotCache latest', () => {
  it('waits for the refetch a read past the TTL starts, and is the fresh snapshot', async () => {
    const t = setUp({ ttlMs: 100, maxStaleMs: 1_000 });
    const first = await t.cache.latest();
    expect(first.value).toBe('v1');
    expect(await t.cache.latest()).toBe(first);
    t.advance(100);
    expect((await t.cache.latest()).value).toBe('v2');
    t.advance(100);
    t.willLoad(async () => {
      throw new Error('feed down');
    });
    const standIn = await t.cache.latest();
    expect(standIn).toMatchObject({ value: 'v2', stale: true });
  });
});

describe('SnapshotCache with failureTtlMs', () => {
  it('answers a failure from memory for failureTtlMs, then asks again', async () => {
    let now = 0;
    let calls = 0;
    const cache = new SnapshotCache<string>({
      ttlMs: 100,
      maxStaleMs: 0,
      failureTtlMs: 50,
      now: () => now,
      load: async () => {
        calls += 1;
        if (calls === 1) throw new Error('no list');
        return 'list';
      },
    });
    await expect(cache.get()).rejects.toThrow('no list');
    now = 49;
    await expect(cache.get()).rejects.toThrow('no list');
    expect(calls).toBe(1);
    now = 50;
    expect((await cache.get()).value).toBe('list');
    expect(calls).toBe(2);
  });
});
