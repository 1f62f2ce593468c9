/**
 * Revalidation as pure units: the validators taken from an answer and sent back, a snapshot cache
 * whose load answers `UNCHANGED` (a 304), and the poller's interval beside the TTL.
 */
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type Snapshot,
  SnapshotCache,
  type SnapshotCacheEvent,
} from '../../src/upstreams/snapshot-cache.js';
import { FeedPoller } from '../../src/upstreams/status-feed/feed-poller.js';
import {
  conditionalHeaders,
  entityTag,
  lastModifiedTime,
  UNCHANGED,
  validatorsOf,
} from '../../src/upstreams/validators.js';

const AT = Date.parse('2026-11-29T12:00:00.000Z');

describe('validators', () => {
  it('keeps a weak or strong entity-tag as it came, and nothing else', () => {
    // githubstatus.com's, 2026: Rack's weak tag.
    expect(entityTag('W/"f7a0dfe2507f90344b5d11c605fa1fc7"')).toBe(
      'W/"f7a0dfe2507f90344b5d11c605fa1fc7"',
    );
    expect(entityTag('"5e1f-19a2b"')).toBe('"5e1f-19a2b"');
    expect(entityTag('""')).toBe('""');
    for (const refused of [
      'f7a0dfe2507f',
      'w/"lowercase-weak"',
      '"a"b"',
      '"line\r\nbreak"',
      `"${'x'.repeat(300)}"`,
      '',
      null,
    ]) {
      expect(entityTag(refused)).toBeUndefined();
    }
  });

  it('uses a Last-Modified only a second or more before the answer, as an IMF-fixdate', () => {
    const date = new Date(AT).toUTCString();
    expect(lastModifiedTime('Sun, 29 Nov 2026 11:59:59 GMT', AT)).toBe(
      'Sun, 29 Nov 2026 11:59:59 GMT',
    );
    // The same second as the answer: a second change within it would carry the same time.
    expect(lastModifiedTime(date, AT)).toBeUndefined();
    expect(lastModifiedTime(date, AT + 999)).toBeUndefined();
    expect(lastModifiedTime(date, AT + 1_000)).toBe(date);
    // Other HTTP-date forms are read, and sent back in the preferred one.
    expect(lastModifiedTime('Sunday, 29-Nov-26 11:00:00 GMT', AT)).toBe(
      'Sun, 29 Nov 2026 11:00:00 GMT',
    );
    expect(lastModifiedTime('yesterday', AT)).toBeUndefined();
  });

  it('reads an answer’s validators against its Date, and makes the conditional headers', () => {
    const headers = new Headers({
      etag: 'W/"190e96564a38a17b670f76ea3b77af44"',
      'last-modified': 'Sun, 29 Nov 2026 11:59:59 GMT',
      date: 'Sun, 29 Nov 2026 12:00:00 GMT',
    });
    // The Date header decides, whatever the local clock says.
    const validators = validatorsOf(headers, AT - 60_000);
    expect(validators).toEqual({
      etag: 'W/"190e96564a38a17b670f76ea3b77af44"',
      lastModified: 'Sun, 29 Nov 2026 11:59:59 GMT',
    });
    expect(conditionalHeaders(validators)).toEqual({
      'if-none-match': 'W/"190e96564a38a17b670f76ea3b77af44"',
      'if-modified-since': 'Sun, 29 Nov 2026 11:59:59 GMT',
    });
    expect(validatorsOf(new Headers({ 'content-type': 'application/json' }), AT)).toBeUndefined();
    expect(validatorsOf(new Headers({ etag: 'unquoted' }), AT)).toBeUndefined();
    expect(conditionalHeaders(undefined)).toEqual({});
  });
});

/** A cache whose loads the test answers: a value, or UNCHANGED when it was given one to confirm. */
function conditionalCache() {
  let now = 1_000_000;
  let answer: (current: Snapshot<{ n: number }> | undefined) => { n: number } | typeof UNCHANGED = (
    current,
  ) => current?.value ?? { n: 1 };
  const given: (Snapshot<{ n: number }> | undefined)[] = [];
  const events: SnapshotCacheEvent[] = [];
  const loaded: [number | undefined, number][] = [];
  const cache = new SnapshotCache<{ n: number }>({
    ttlMs: 100,
    maxStaleMs: 1_000,
    now: () => now,
    load: async (_requestId, current) => {
      given.push(current);
      return answer(current);
    },
    onEvent: (event) => events.push(event),
    onLoaded: (previous, next) => loaded.push([previous?.value.n, next.value.n]),
  });
  return {
    cache,
    given,
    events,
    loaded,
    advance: (ms: number) => {
      now += ms;
    },
    answerWith: (next: typeof answer) => {
      answer = next;
    },
  };
}

describe('SnapshotCache, when a load answers UNCHANGED', () => {
  it('keeps the value, confirmed now: a new snapshot, no onLoaded, an unchanged event', async () => {
    const t = conditionalCache();
    const first = await t.cache.get();
    expect(t.given).toEqual([undefined]);
    t.answerWith((current) => (current ? UNCHANGED : { n: 2 }));
    t.advance(150);
    const confirmed = await t.cache.latest();
    // The load was given the snapshot on hand, to ask the upstream about.
    expect(t.given[1]).toBe(first);
    expect(confirmed).not.toBe(first);
    expect(confirmed.value).toBe(first.value);
    expect(confirmed.fetchedAt.getTime() - first.fetchedAt.getTime()).toBe(150);
    expect(confirmed.stale).toBe(false);
    expect(t.loaded).toEqual([[undefined, 1]]);
    expect(t.events).toEqual(['miss', 'revalidating', 'unchanged']);
    // Answers built from the old snapshot said an older fetch time: no longer current.
    expect(t.cache.currencyOf(first)).toBeUndefined();
    expect(t.cache.currencyOf(confirmed)?.(1_000_150)).toBe(true);
    // Fresh for a whole TTL from the confirmation.
    t.advance(99);
    expect(await t.cache.get()).toBe(confirmed);
  });

  it('still reports a change that follows a run of confirmations, once', async () => {
    const t = conditionalCache();
    await t.cache.get();
    t.answerWith((current) => (current ? UNCHANGED : { n: 9 }));
    for (let i = 0; i < 5; i++) {
      t.advance(150);
      await t.cache.latest();
    }
    t.answerWith(() => ({ n: 2 }));
    t.advance(150);
    expect((await t.cache.latest()).value.n).toBe(2);
    t.answerWith((current) => (current ? UNCHANGED : { n: 9 }));
    t.advance(150);
    await t.cache.latest();
    expect(t.loaded).toEqual([
      [undefined, 1],
      [1, 2],
    ]);
    expect(t.events.filter((event) => event === 'unchanged')).toHaveLength(6);
  });

  it('ends an outage: the stand-in gives way to the confirmed value', async () => {
    const t = conditionalCache();
    const first = await t.cache.get();
    t.answerWith(() => {
      throw new Error('503');
    });
    t.advance(150);
    expect(await t.cache.latest()).toMatchObject({ value: first.value, stale: true });
    t.answerWith((current) => (current ? UNCHANGED : { n: 9 }));
    t.advance(10);
    const back = await t.cache.latest();
    expect(back).toMatchObject({ value: first.value, stale: false });
    expect(back.fetchedAt.getTime() - first.fetchedAt.getTime()).toBe(160);
  });

  it('fetches whole when there is nothing to confirm, and fails when that answers UNCHANGED', async () => {
    const t = conditionalCache();
    t.answerWith((current) => (current ? { n: 5 } : UNCHANGED));
    await expect(t.cache.get()).rejects.toThrow('a load without a snapshot answered UNCHANGED');
    expect(t.given).toEqual([undefined, undefined]);
    t.answerWith(() => ({ n: 3 }));
    t.cache.close();
    // Closed, a read has nothing on hand: its load is given none.
    expect((await t.cache.get()).value.n).toBe(3);
    expect(t.given.at(-1)).toBeUndefined();
  });
});

describe('FeedPoller with a page interval longer than the TTL', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A cache of a 10 s TTL whose loads are counted, and a poller of a 60 s interval over it. */
  function setUp() {
    vi.useFakeTimers();
    let loads = 0;
    const cache = new SnapshotCache<number>({
      ttlMs: 10_000,
      maxStaleMs: 300_000,
      load: async () => {
        loads += 1;
        return loads;
      },
    });
    const poller = new FeedPoller({
      feed: { poll: () => cache.latest() },
      intervalMs: 60_000,
      ttlMs: 10_000,
      logger: pino({ level: 'silent' }),
    });
    return { cache, poller, loads: () => loads };
  }

  it('fetches a followed page once a minute', async () => {
    const { poller, loads } = setUp();
    const release = poller.acquire(['summary']);
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    release();
    // At 0, then one a minute: ten in ten minutes, where a 10 s TTL alone would be sixty.
    expect(loads()).toBe(10);
  });

  it('adds no fetch to what queries cost within the TTL', async () => {
    const queried = async (withPoller: boolean) => {
      const { cache, poller, loads } = setUp();
      const release = withPoller ? poller.acquire(['summary']) : () => {};
      for (let second = 0; second < 600; second += 4) {
        await cache.get();
        await vi.advanceTimersByTimeAsync(4_000);
      }
      release();
      vi.useRealTimers();
      return loads();
    };
    const byQueries = await queried(false);
    expect(byQueries).toBeGreaterThan(40);
    expect(await queried(true)).toBe(byQueries);
  });
});
