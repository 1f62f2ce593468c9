/**
 * Revalidation shared by replicas through a real redis-server: two replicas in this process over
 * one document whose upstream the test plays, an upstream that tags each version and answers
 * UNCHANGED (a 304) to a fetch naming the version it serves.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RedisSnapshotStore } from '../../src/upstreams/redis-snapshot-store.js';
import { type Snapshot, SnapshotCache } from '../../src/upstreams/snapshot-cache.js';
import { UNCHANGED, type Validators } from '../../src/upstreams/validators.js';
import { eventually } from '../helpers/eventually.js';
import { type TestConnection, useRedisServer } from '../helpers/redis-server.js';

const TTL_MS = 2_000;
const DOCUMENT = '/summary.json';
const Wire = z.object({ value: z.string() });
type Wire = z.output<typeof Wire>;

const redisServer = useRedisServer();
let raw: Redis;
beforeAll(() => {
  raw = new Redis(redisServer.server.url);
});
afterAll(() => raw?.disconnect());

/** The document's upstream: a version at a time, each with its ETag. */
function upstream() {
  let version = 1;
  const tagged = new WeakMap<Wire, Validators>();
  const state = {
    /** What each fetch sent, in order. */
    sent: [] as (Validators | undefined)[],
    etag: () => `W/"v${version}"`,
    change() {
      version += 1;
    },
    async fetch(validators: Validators | undefined): Promise<Wire | typeof UNCHANGED> {
      state.sent.push(validators);
      if (validators?.etag === state.etag()) return UNCHANGED;
      const wire = { value: `v${version}` };
      tagged.set(wire, { etag: state.etag() });
      return wire;
    },
    validatorsOf: (wire: Wire) => tagged.get(wire),
  };
  return state;
}

function clock() {
  let ahead = 0;
  return {
    now: () => Date.now() + ahead,
    advance(ms: number) {
      ahead += ms;
    },
  };
}

function replica(feed: ReturnType<typeof upstream>, connection: TestConnection, now: () => number) {
  const loaded: { previous: string | undefined; next: string }[] = [];
  const builds: string[] = [];
  const build = (wire: Wire) => {
    builds.push(wire.value);
    return wire.value;
  };
  const cache = new SnapshotCache<string>({
    now,
    ttlMs: TTL_MS,
    maxStaleMs: 60_000,
    load: async () => {
      const wire = await feed.fetch(undefined);
      if (wire === UNCHANGED) throw new Error('unconditional fetch answered UNCHANGED');
      return build(wire);
    },
    sharing: new RedisSnapshotStore({ redis: connection.redis }).document({
      name: DOCUMENT,
      fetch: (_requestId, validators) => feed.fetch(validators),
      validatorsOf: feed.validatorsOf,
      schema: Wire,
      build,
      ttlMs: TTL_MS,
      retainMs: 60_000,
      failureTtlMs: 0,
      lockMs: 1_000,
      now,
    }),
    onLoaded: (previous: Snapshot<string> | undefined, next: Snapshot<string>) =>
      loaded.push({ previous: previous?.value, next: next.value }),
  });
  return { cache, loaded, builds, connection };
}

async function pair() {
  const feed = upstream();
  const [forX, forY] = await redisServer.replicas(2);
  if (!forX || !forY) throw new Error('two connections');
  const time = clock();
  const x = replica(feed, forX, time.now);
  const y = replica(feed, forY, time.now);
  const snapshotKey = forX.redis.key(`snapshot:${DOCUMENT}`);
  const stored = async () => raw.hgetall(snapshotKey);
  return { feed, x, y, clock: time, snapshotKey, stored };
}

describe('revalidation across replicas', () => {
  it('stores the validators with the document; a 304 moves its fetch time on, same version', async () => {
    const { feed, x, y, clock, stored } = await pair();
    const first = await x.cache.get();
    await y.cache.get();
    const before = await stored();
    expect(before).toMatchObject({ etag: 'W/"v1"', fetchedAt: String(first.fetchedAt.getTime()) });
    clock.advance(TTL_MS);
    const confirmed = await x.cache.latest();
    expect(feed.sent).toEqual([undefined, { etag: 'W/"v1"' }]);
    expect(confirmed.value).toBe('v1');
    expect(confirmed.fetchedAt.getTime()).toBeGreaterThanOrEqual(
      first.fetchedAt.getTime() + TTL_MS,
    );
    const after = await stored();
    expect(after.version).toBe(before.version);
    expect(after.fetchedAt).toBe(String(confirmed.fetchedAt.getTime()));
    // Y adopts the confirmation: no fetch, no build, its snapshot as fresh as X's.
    const adopted = await y.cache.latest();
    expect(adopted.fetchedAt).toEqual(confirmed.fetchedAt);
    expect(feed.sent).toHaveLength(2);
    expect([x.builds, y.builds]).toEqual([['v1'], ['v1']]);
    // Nothing changed: onLoaded heard of the first load alone.
    expect([x.loaded, y.loaded]).toEqual([[{ previous: undefined, next: 'v1' }], []]);
  });

  it('lets whichever replica refreshes next revalidate with the stored validators', async () => {
    const { feed, x, y, clock } = await pair();
    await x.cache.get();
    await y.cache.get();
    clock.advance(TTL_MS);
    // Y never fetched: it sends what X stored.
    await y.cache.latest();
    expect(feed.sent).toEqual([undefined, { etag: 'W/"v1"' }]);
    clock.advance(TTL_MS);
    await x.cache.latest();
    expect(feed.sent).toEqual([undefined, { etag: 'W/"v1"' }, { etag: 'W/"v1"' }]);
    expect([x.builds, y.builds]).toEqual([['v1'], ['v1']]);
  });

  it('costs one revalidation when both replicas refresh at once', async () => {
    const { feed, x, y, clock } = await pair();
    await x.cache.get();
    await y.cache.get();
    clock.advance(TTL_MS);
    const [fromX, fromY] = await Promise.all([x.cache.latest(), y.cache.latest()]);
    expect(feed.sent).toHaveLength(2);
    expect(fromX.fetchedAt).toEqual(fromY.fetchedAt);
  });

  it('fetches a change whole after a run of 304s, as a new version, told once', async () => {
    const { feed, x, y, clock, stored } = await pair();
    await x.cache.get();
    await y.cache.get();
    for (let i = 0; i < 3; i++) {
      clock.advance(TTL_MS);
      await (i % 2 === 0 ? x : y).cache.latest();
    }
    const version = (await stored()).version;
    feed.change();
    clock.advance(TTL_MS);
    expect((await x.cache.latest()).value).toBe('v2');
    expect(feed.sent.at(-1)).toEqual({ etag: 'W/"v1"' });
    expect(await stored()).toMatchObject({ etag: 'W/"v2"' });
    expect((await stored()).version).not.toBe(version);
    await eventually(async () => (await y.cache.get()).value === 'v2');
    expect(x.loaded).toEqual([
      { previous: undefined, next: 'v1' },
      { previous: 'v1', next: 'v2' },
    ]);
    expect(y.loaded).toEqual([]);
    expect([x.builds, y.builds]).toEqual([
      ['v1', 'v2'],
      ['v1', 'v2'],
    ]);
  });

  it('fetches whole when Redis no longer holds the version the upstream confirmed', async () => {
    const { feed, x, y, clock, snapshotKey, stored } = await pair();
    await x.cache.get();
    await raw.del(snapshotKey);
    clock.advance(TTL_MS);
    expect((await x.cache.latest()).value).toBe('v1');
    // The 304 could not be shared, so the document was fetched again, unconditionally.
    expect(feed.sent).toEqual([undefined, { etag: 'W/"v1"' }, undefined]);
    expect(await stored()).toMatchObject({ etag: 'W/"v1"' });
    expect((await y.cache.get()).value).toBe('v1');
    expect(feed.sent).toHaveLength(3);
  });

  it('refuses validators in Redis that are not the upstream’s, and fetches unconditionally', async () => {
    const { feed, x, y, clock, snapshotKey } = await pair();
    await x.cache.get();
    await raw.hset(snapshotKey, 'etag', 'no quotes\r\nx-injected: 1');
    await y.cache.get();
    clock.advance(TTL_MS);
    await y.cache.latest();
    expect(feed.sent).toEqual([undefined, undefined]);
    expect(y.connection.logs.map((line) => line.refused)).toContain('malformed validators');
  });
});
