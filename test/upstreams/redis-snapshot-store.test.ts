/**
 * Snapshots shared by replicas through a real redis-server: two replicas in this process, each
 * with its own connection, store and cache, over one document whose upstream the test plays.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UpstreamUnavailableError } from '../../src/errors/upstream-unavailable-error.js';
import { RedisSnapshotStore } from '../../src/upstreams/redis-snapshot-store.js';
import { type Snapshot, SnapshotCache } from '../../src/upstreams/snapshot-cache.js';
import { eventually, sleep } from '../helpers/eventually.js';
import { type TestConnection, useRedisServer } from '../helpers/redis-server.js';

/** Long enough not to run out while a test runs: the tests move the replicas' clock past it. */
const TTL_MS = 2_000;
const DOCUMENT = '/summary.json';
const Wire = z.object({ value: z.string(), fetchedBy: z.string() });
type Wire = z.output<typeof Wire>;
const ENDPOINT = { upstream: 'status feed', method: 'GET', path: DOCUMENT };

const redisServer = useRedisServer();
/** A client of the test's own, playing a replica that misbehaves. */
let raw: Redis;
beforeAll(() => {
  raw = new Redis(redisServer.server.url);
});
afterAll(() => raw?.disconnect());

/** The document's upstream: every replica's fetches land here. */
function upstream() {
  let version = 0;
  let answer: (replica: string) => Promise<Wire> = async (replica) => {
    version += 1;
    return { value: `v${version}`, fetchedBy: replica };
  };
  const state = {
    fetches: 0,
    answerWith(next: (replica: string) => Promise<Wire>) {
      answer = next;
    },
    fetch: (replica: string) => {
      state.fetches += 1;
      return answer(replica);
    },
  };
  return state;
}

interface Replica {
  readonly name: string;
  readonly cache: SnapshotCache<string>;
  readonly loaded: { previous: string | undefined; next: string }[];
  readonly builds: string[];
  readonly connection: TestConnection;
  readonly store: RedisSnapshotStore;
}

/**
 * The replicas' clock: the wall clock, moved ahead when the test says, so that a snapshot grows old
 * without the test sleeping.
 */
function clock() {
  let ahead = 0;
  return {
    now: () => Date.now() + ahead,
    advance(ms: number) {
      ahead += ms;
    },
  };
}

function replica(
  name: string,
  feed: ReturnType<typeof upstream>,
  connection: TestConnection,
  now: () => number,
  { failureTtlMs = 0, lockMs = 1_000, ttlMs = TTL_MS } = {},
): Replica {
  const store = new RedisSnapshotStore({ redis: connection.redis });
  const loaded: Replica['loaded'] = [];
  const builds: string[] = [];
  const build = (wire: Wire) => {
    builds.push(wire.value);
    return wire.value;
  };
  const cache = new SnapshotCache<string>({
    now,
    ttlMs,
    maxStaleMs: 60_000,
    failureTtlMs,
    load: async () => build(await feed.fetch(name)),
    sharing: store.document({
      name: DOCUMENT,
      fetch: () => feed.fetch(name),
      schema: Wire,
      build,
      ttlMs,
      retainMs: 60_000,
      failureTtlMs,
      lockMs,
      now,
    }),
    onLoaded: (previous: Snapshot<string> | undefined, next: Snapshot<string>) =>
      loaded.push({ previous: previous?.value, next: next.value }),
  });
  return { name, cache, loaded, builds, connection, store };
}

interface PairOptions {
  failureTtlMs?: number;
  lockMs?: number;
  /** X's TTL, when it differs from Y's. */
  xTtlMs?: number;
}

async function pair({ xTtlMs, ...options }: PairOptions = {}) {
  const feed = upstream();
  const [forX, forY] = await redisServer.replicas(2);
  if (!forX || !forY) throw new Error('two connections');
  const time = clock();
  const x = replica('X', feed, forX, time.now, {
    ...options,
    ...(xTtlMs ? { ttlMs: xTtlMs } : {}),
  });
  const y = replica('Y', feed, forY, time.now, options);
  /** A key of the document, as the replicas name it. */
  const key = (kind: 'lock' | 'snapshot') => forX.redis.key(`${kind}:${DOCUMENT}`);
  return { feed, key, x, y, clock: time };
}

describe('RedisSnapshotStore', () => {
  it('forgets the document of a closed cache: nothing registered, nothing held, reads still answer', async () => {
    const { x, y } = await pair();
    const first = await x.cache.get();
    expect(x.store.documents).toBe(1);
    x.cache.close();
    expect(x.store.documents).toBe(0);
    expect(x.cache.current).toBeUndefined();
    expect(x.cache.currencyOf(first)).toBeUndefined();
    // Closed, X fetches for its reader alone, and shares nothing: Y reads what Redis holds.
    const read = await x.cache.get();
    expect(read.value).toBe('v2');
    expect(x.cache.current).toBeUndefined();
    expect((await y.cache.get()).value).toBe('v1');
  });

  it('lets one replica fetch per TTL; the other builds the stored document, once per version', async () => {
    const { feed, x, y } = await pair();
    const first = await x.cache.get();
    const adopted = await y.cache.get();
    expect(feed.fetches).toBe(1);
    expect(adopted.value).toBe(first.value);
    expect(adopted.fetchedAt).toEqual(first.fetchedAt);
    expect(await y.cache.get()).toBe(adopted);
    expect([x.builds, y.builds]).toEqual([['v1'], ['v1']]);
  });

  it('costs one fetch when both replicas miss at once: a lock, not a race', async () => {
    const { feed, x, y } = await pair();
    feed.answerWith(async (replica) => {
      await sleep(100);
      return { value: 'slow', fetchedBy: replica };
    });
    const answers = await Promise.all([x.cache.get(), y.cache.get(), x.cache.get()]);
    expect(feed.fetches).toBe(1);
    expect(answers.map((answer) => answer.value)).toEqual(['slow', 'slow', 'slow']);
  });

  it('tells onLoaded on the replica that fetched, with the replicas’ previous snapshot', async () => {
    const { feed, x, y, clock } = await pair();
    await x.cache.get();
    await y.cache.get();
    clock.advance(TTL_MS);
    // Y's read past the TTL serves v1 and refetches in the background.
    expect((await y.cache.get()).value).toBe('v1');
    await eventually(async () => (await y.cache.get()).value === 'v2');
    // X hears of v2: its v1 is no longer current, and a read adopts v2 without a fetch.
    await eventually(async () => (await x.cache.get()).value === 'v2');
    expect(feed.fetches).toBe(2);
    expect(x.loaded).toEqual([{ previous: undefined, next: 'v1' }]);
    expect(y.loaded).toEqual([{ previous: 'v1', next: 'v2' }]);
  });

  it('makes a snapshot another replica replaced stop being current at once', async () => {
    // X keeps snapshots for a minute; Y refetches after 2 s (a rolling deploy changing the
    // TTL, or a replica whose clock runs ahead).
    const { x, y, clock } = await pair({ xTtlMs: 60_000 });
    const old = await x.cache.get();
    await y.cache.get();
    clock.advance(TTL_MS);
    expect(x.cache.isCurrent(old)).toBe(true);
    await eventually(async () => (await y.cache.get()).value === 'v2');
    await eventually(() => !x.cache.isCurrent(old));
    expect(old.value).toBe('v1');
  });

  it('holds the others back while a replica that died holds the lock, until the lock expires', async () => {
    const { feed, key, x } = await pair({ lockMs: 300 });
    await raw.set(key('lock'), 'a replica that died', 'PX', 300);
    const read = x.cache.get();
    // Halfway through the lock's life (Redis's clock), X still waits.
    await eventually(async () => (await raw.pttl(key('lock'))) < 150);
    expect(feed.fetches).toBe(0);
    expect((await read).value).toBe('v1');
    expect(feed.fetches).toBe(1);
  });

  it('answers the failure of the replica that fetched to those that waited for it', async () => {
    const { feed, x, y } = await pair();
    feed.answerWith(async () => {
      await sleep(100);
      throw new UpstreamUnavailableError(ENDPOINT, 'HTTP 503', { status: 503 });
    });
    const [fromX, fromY] = await Promise.allSettled([x.cache.get(), y.cache.get()]);
    expect(feed.fetches).toBe(1);
    for (const result of [fromX, fromY]) {
      expect(result.status).toBe('rejected');
      const error = (result as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(UpstreamUnavailableError);
      expect(error.message).toBe('The status feed GET /summary.json is unavailable: HTTP 503');
      expect(error.status).toBe(503);
    }
  });

  it('keeps a failure for the failure TTL across replicas (a document the host does not serve)', async () => {
    const { feed, x, y } = await pair({ failureTtlMs: 5_000 });
    feed.answerWith(async () => {
      throw new UpstreamUnavailableError(ENDPOINT, 'HTTP 404', { status: 404 });
    });
    await expect(x.cache.get()).rejects.toThrow('HTTP 404');
    await expect(y.cache.get()).rejects.toThrow('HTTP 404');
    expect(feed.fetches).toBe(1);
  });

  it('lets a replica that starts while the feed fails serve the replicas’ last good snapshot, stale', async () => {
    const { feed, x, y, clock } = await pair();
    await x.cache.get();
    clock.advance(TTL_MS);
    feed.answerWith(async () => {
      throw new UpstreamUnavailableError(ENDPOINT, 'HTTP 503', { status: 503 });
    });
    const served = await y.cache.get();
    expect(served).toMatchObject({ value: 'v1', stale: true });
  });

  it('fetches again rather than serve a stored document that is not valid', async () => {
    const { feed, key, x } = await pair();
    await raw.hset(key('snapshot'), {
      version: 'forged',
      fetchedAt: Date.now(),
      body: '{"value": 42}',
    });
    expect((await x.cache.get()).value).toBe('v1');
    expect(feed.fetches).toBe(1);
    expect(x.connection.logs.map((line) => line.msg)).toContain(
      'a value read from redis was refused; this replica carries on without it',
    );
  });

  it('loads alone while Redis is unavailable, and shares again once it is back', async () => {
    const { feed, x, y, clock } = await pair();
    await redisServer.server.kill();
    await eventually(() => !x.connection.redis.connected && !y.connection.redis.connected);
    expect((await x.cache.get()).value).toBe('v1');
    expect((await y.cache.get()).value).toBe('v2');
    expect(feed.fetches).toBe(2);
    await redisServer.server.restart();
    await eventually(() => x.connection.redis.connected && y.connection.redis.connected);
    clock.advance(TTL_MS);
    await Promise.all([x.cache.get(), y.cache.get()]);
    await eventually(async () => (await x.cache.get()).value === 'v3');
    await eventually(async () => (await y.cache.get()).value === 'v3');
    expect(feed.fetches).toBe(3);
  });
});
