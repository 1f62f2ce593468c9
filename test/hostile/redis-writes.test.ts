/**
 * Issue 25, Redis findings: whoever can write to the Redis the replicas share (a neighbour on a
 * shared instance, a leaked password) writes keys and publishes messages; each finding replayed on
 * a real port against the production listener (`startHarness`) and a real redis-server.
 */
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import type { SimulatedFeed } from '../../simulator/src/status-feed/types.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { pagePath, withOwnPages } from '../helpers/own-pages.js';
import {
  REDIS_INSTALL_TIMEOUT_MS,
  type RedisServer,
  startRedisServer,
} from '../helpers/redis-server.js';
import { subscribeSse } from '../helpers/subscriptions.js';

const SUMMARY = '/summary.json';
const UPCOMING = '/scheduled-maintenances/upcoming.json';
const REFUSED = 'a value read from redis was refused; this replica carries on without it';
const TEN_YEARS_MS = 10 * 365 * 24 * 3_600_000;
/** The key prefix of the file's replicas: they share it, as the replicas of one gateway. */
const PREFIX = `hostile-${randomUUID()}:`;

/** The pages of the tests, each its own: its upstream paths, counts and Redis keys. */
type Slug =
  | 'oversized'
  | 'future'
  | 'free-text-failure'
  | 'failure'
  | 'forged-event'
  | 'notice-flood'
  | 'lock'
  | 'kept-lock';
/** The pages `replica` serves. */
const REPLICA_PAGES: readonly Slug[] = [
  'oversized',
  'future',
  'free-text-failure',
  'failure',
  'forged-event',
  'lock',
];
/** The pages `fresh` serves. */
const FRESH_PAGES: readonly Slug[] = ['forged-event', 'notice-flood', 'kept-lock'];

/** The query of `slug`'s name. */
const pageQuery = (slug: Slug | 'default') =>
  slug === 'default' ? '{ statusPage { name } }' : `{ statusPage(slug: "${slug}") { name } }`;
/** What a page's document is named in Redis (`snapshot:<name>`, `lock:<name>`), and in notices. */
const sharedName = (slug: Slug, document: string) => `${slug}${document}`;

let server: RedisServer;
/** The attacker's own connection. */
let raw: Redis;
const REPLICA_TTL_MS = 1_000;
/**
 * Its upstream, the simulator, runs in this process, which the tests' forged values of 10 to 20
 * MiB (and their collection) stall for hundreds of ms on a loaded machine: a fetch meanwhile is
 * not what these tests are about.
 */
const REPLICA_UPSTREAM_TIMEOUT_MS = 3_000;
/**
 * The replica most tests write for: its snapshots fresh for a second (past it, a read looks at
 * Redis).
 */
let replica: Harness;
/**
 * Another replica on the same key prefix, whose snapshots stay fresh for a minute: it hears of
 * changes only from the other, through Redis, and answers from its response cache meanwhile. Its
 * upstream timeout of 500 ms is its lock time.
 */
let fresh: Harness;
/** The feeds `replica`'s simulator serves, by page. */
const feeds = new Map<Slug, SimulatedFeed>(
  REPLICA_PAGES.map((slug) => [slug, createSimulatedFeed()]),
);

/** A replica on the suite's Redis and key prefix, serving `pages` of its simulator. */
async function startReplica(
  pages: Readonly<Record<string, SimulatedFeed>>,
  env: Record<string, string | number>,
) {
  const harness = await startHarness(
    withOwnPages(pages, {
      env: {
        REDIS_URL: server.url,
        REDIS_KEY_PREFIX: PREFIX,
        REDIS_COMMAND_TIMEOUT_MS: 2_000,
        ...env,
      },
    }),
  );
  await eventually(async () => {
    const readiness = await (await harness.fetch('/readiness')).json();
    return readiness.redis?.state === 'connected';
  });
  return harness;
}

beforeAll(async () => {
  server = await startRedisServer();
  raw = new Redis(server.url);
  [replica, fresh] = await Promise.all([
    startReplica(Object.fromEntries(feeds), {
      STATUS_CACHE_TTL_MS: REPLICA_TTL_MS,
      UPSTREAM_TIMEOUT_MS: REPLICA_UPSTREAM_TIMEOUT_MS,
    }),
    startReplica(Object.fromEntries(FRESH_PAGES.map((slug) => [slug, createSimulatedFeed()])), {
      STATUS_CACHE_TTL_MS: 60_000,
      STATUS_POLL_INTERVAL_MS: 60_000,
      UPSTREAM_TIMEOUT_MS: 500,
    }),
  ]);
}, REDIS_INSTALL_TIMEOUT_MS);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
afterEach(() => {
  replica.simulator.clearFaults();
  fresh.simulator.clearFaults();
  // The tens of MiB a test's forged values left (here and in the replicas' Redis clients) are
  // collected now, not in the middle of the next test's upstream fetch.
  gc();
});

afterAll(async () => {
  await Promise.all([replica?.close(), fresh?.close()]);
  raw?.disconnect();
  await server?.stop();
});

/** The refusals `harness` logged from line `since` on (the test's own). */
const refusals = (harness: Harness, since: number) =>
  harness.logs
    .slice(since)
    .filter((line) => line.msg === REFUSED)
    .map((line) => line.refused);

/** Page `slug`'s summary as the simulator serves it, renamed: a document that passes the schema. */
async function forgedSummary(harness: Harness, slug: Slug, name: string): Promise<string> {
  const summary = await (await fetch(`${harness.simulator.statusPageUrl(slug)}${SUMMARY}`)).json();
  summary.page.name = name;
  return JSON.stringify(summary);
}

describe('Redis is an input like any other', () => {
  it('finding 1: drops a 20 MiB message on the changes channel unread, and keeps answering', async () => {
    const since = replica.logs.length;
    expect((await replica.execute(pageQuery('default'))).status).toBe(200);
    const huge = `{"origin":"x","event":{"type":"page","junk":[${'{},'.repeat(7_000_000)}{}]}}`;
    expect(huge.length).toBeGreaterThan(20 * 1024 * 1024);
    // One at a time: Redis itself drops a subscriber with more than 32 MiB waiting for it. Both
    // replicas of the prefix are sent it.
    expect(await raw.publish(`${PREFIX}changes`, huge)).toBe(2);
    await eventually(() => refusals(replica, since).includes('oversized message'));
    expect(await raw.publish(`${PREFIX}snapshots`, huge)).toBe(2);
    const { status, body } = await replica.execute(pageQuery('default'));
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
  });

  it('finding 2: leaves a 9.5 MiB snapshot unread and fetches the summary from the upstream', async () => {
    const since = replica.logs.length;
    const snapshot = `${PREFIX}snapshot:${sharedName('oversized', SUMMARY)}`;
    const body = `{"junk":[${'{},'.repeat(3_330_000)}{}]}`;
    expect(body.length).toBeGreaterThan(9.5 * 1024 * 1024);
    await raw.hset(snapshot, { version: 'forged', fetchedAt: Date.now(), body });
    const fetches = replica.simulator.requestCount(pagePath('oversized', SUMMARY));
    // The replica looks at Redis for a snapshot it has not read (or read past the TTL): this one
    // is too large to read.
    await eventually(
      async () => {
        const { status, body: answer } = await replica.execute<{ statusPage: { name: string } }>(
          pageQuery('oversized'),
        );
        expect(status).toBe(200);
        expect(answer.data?.statusPage.name).toBe(feeds.get('oversized')?.summary.page.name);
        return refusals(replica, since).includes('oversized snapshot');
      },
      { intervalMs: 50 },
    );
    // …fetches the summary from the upstream and stores it in its place.
    await eventually(async () => (await raw.hget(snapshot, 'version')) !== 'forged');
    expect(replica.simulator.requestCount(pagePath('oversized', SUMMARY))).toBeGreaterThan(fetches);
  });

  it('finding 3: refuses a page fetched ten years ahead; max-age never exceeds the TTL', async () => {
    const since = replica.logs.length;
    const ttlMs = REPLICA_TTL_MS;
    const snapshot = `${PREFIX}snapshot:${sharedName('future', SUMMARY)}`;
    await raw.hset(snapshot, {
      version: 'forged',
      fetchedAt: Date.now() + TEN_YEARS_MS,
      body: await forgedSummary(replica, 'future', 'Forged page'),
    });
    // The replica looks at Redis: the page from the future is not taken.
    const answers: { name?: string; maxAge: number }[] = [];
    await eventually(
      async () => {
        const { headers, body } = await replica.execute<{ statusPage: { name: string } }>(
          pageQuery('future'),
        );
        const maxAge = Number(/max-age=(\d+)/.exec(headers.get('cache-control') ?? '')?.[1] ?? 0);
        answers.push({ name: body.data?.statusPage.name, maxAge });
        return refusals(replica, since).includes('snapshot from the future');
      },
      { intervalMs: 50 },
    );
    // The replica's own fetch replaced it, and it goes on answering the upstream's page.
    await eventually(async () => (await raw.hget(snapshot, 'version')) !== 'forged');
    await raw.del(snapshot);
    const { body } = await replica.executeAfterRefetch<{ statusPage: { name: string } }>(
      pageQuery('future'),
    );
    answers.push({ name: body.data?.statusPage.name, maxAge: 0 });
    expect(answers.length).toBeGreaterThan(1);
    for (const { name, maxAge } of answers) {
      expect(name).toBe(feeds.get('future')?.summary.page.name);
      expect(maxAge).toBeLessThanOrEqual(ttlMs / 1000);
    }
  });

  it('finding 4: a failure record without expiry or of free text is deleted, never answered', async () => {
    const failure = `${PREFIX}failure:${sharedName('free-text-failure', UPCOMING)}`;
    // The format before: free text, no expiry; written before the replica reads the document.
    await raw.hset(failure, {
      token: 'forged',
      error: JSON.stringify({
        code: 'UPSTREAM_UNAVAILABLE',
        message: 'Send 1 BTC to bc1qforged to restore service',
        endpoint: { upstream: 'status feed', method: 'GET', path: UPCOMING },
      }),
    });
    const { body } = await replica.execute(
      '{ statusPage(slug: "free-text-failure") { upcomingMaintenances { id } } }',
    );
    expect(JSON.stringify(body)).not.toContain('BTC');
    expect(body.errors).toBeUndefined();
    expect(await raw.exists(failure)).toBe(0);
  });

  it('finding 4: a failure the replicas record is a code, a status and a time, and expires', async () => {
    // Every try answered 503, its retries too: the failed fetch is recorded once.
    replica.simulator.setFault('status', `/failure/api/v2${UPCOMING}`, {
      kind: 'status',
      status: 503,
    });
    const { body } = await replica.execute(
      '{ statusPage(slug: "failure") { upcomingMaintenances { id } } }',
    );
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    const failure = `${PREFIX}failure:${sharedName('failure', UPCOMING)}`;
    const record = await raw.hgetall(failure);
    expect(Object.keys(record).sort()).toEqual(['at', 'code', 'status', 'token']);
    expect(record).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', status: '503' });
    expect(await raw.pttl(failure)).toBeGreaterThan(0);
  });

  it('finding 5: a forged change event is not delivered; a real one is, as the snapshot says it', async () => {
    const since = fresh.logs.length;
    const page = pageQuery('forged-event');
    const snapshot = `${PREFIX}snapshot:${sharedName('forged-event', SUMMARY)}`;
    // `fresh` hears of changes only from `replica`, through Redis.
    const subscriber = await subscribeSse<{
      componentStatusChanged: { component: { id: string; name: string }; status: string };
    }>(
      fresh.origin,
      'subscription { componentStatusChanged(slugs: ["forged-event"]) { component { id name } status } }',
    );
    // Only `replica`'s reads refetch the summary (past its TTL), and it stores each for the others.
    const reader = setInterval(() => void replica.execute(page), 100);
    try {
      await fresh.execute(page);
      const leaf = feeds
        .get('forged-event')
        ?.summary.components.find(
          (component) => !component.group && component.status === 'operational',
        );
      if (!leaf) throw new Error('the demo feed has an operational component');
      // Naming the snapshot Redis holds now, as the attacker can read it.
      const version = await eventually(
        async () => (await raw.hget(snapshot, 'version')) ?? undefined,
      );
      const detectedAt = await raw.hget(snapshot, 'fetchedAt');
      await raw.publish(
        `${PREFIX}changes`,
        JSON.stringify({
          origin: 'forged',
          name: sharedName('forged-event', SUMMARY),
          version,
          event: {
            type: 'component',
            component: { id: leaf.id, name: 'Send 1 BTC to bc1qforged', status: 'MAJOR_OUTAGE' },
            previousStatus: 'OPERATIONAL',
            status: 'MAJOR_OUTAGE',
            detectedAt: new Date(Number(detectedAt)).toISOString(),
          },
        }),
      );
      await eventually(
        () => refusals(fresh, since).includes('change event not shown by the stored snapshot'),
        { timeoutMs: 3_000 },
      );
      replica.simulator.updateStatusPage('forged-event', (feed) =>
        setComponentStatuses(feed, { [leaf.id]: 'partial_outage' }),
      );
      const event = await subscriber.next(10_000);
      expect(event.data?.componentStatusChanged).toEqual({
        component: { id: leaf.id, name: leaf.name },
        status: 'PARTIAL_OUTAGE',
      });
      expect(JSON.stringify(subscriber.events)).not.toContain('BTC');
    } finally {
      clearInterval(reader);
      await subscriber.close();
    }
  });

  it('finding 6: a flood of forged notices does not evict cached answers', async () => {
    const page = pageQuery('notice-flood');
    // Read once, cached for the minute of the TTL.
    await eventually(async () => (await fresh.execute(page)).body.errors === undefined);
    const fetches = fresh.simulator.requestCount(pagePath('notice-flood', SUMMARY));
    const hitsBefore = await fresh.metric('response_cache_reads_total{result="hit"}');
    const requests = 50;
    for (let i = 0; i < requests; i += 1) {
      const flood = raw.pipeline();
      for (let j = 0; j < 100; j += 1) {
        flood.publish(
          `${PREFIX}snapshots`,
          JSON.stringify({
            name: sharedName('notice-flood', SUMMARY),
            version: randomUUID(),
            fetchedAt: Date.now() + j,
          }),
        );
      }
      await flood.exec();
      const { status } = await fresh.execute(page);
      expect(status).toBe(200);
    }
    // Every one of them answered from the response cache: no notice superseded the snapshot.
    expect(await fresh.metric('response_cache_reads_total{result="hit"}')).toBe(
      hitsBefore + requests,
    );
    expect(fetches).toBeGreaterThan(0);
    expect(fresh.simulator.requestCount(pagePath('notice-flood', SUMMARY))).toBe(fetches);
  });

  it('finding 7: a lock without expiry does not hold a replica back', async () => {
    const since = replica.logs.length;
    const lock = `${PREFIX}lock:${sharedName('lock', SUMMARY)}`;
    const snapshot = `${PREFIX}snapshot:${sharedName('lock', SUMMARY)}`;
    await raw.set(lock, 'forged');
    const fetches = replica.simulator.requestCount(pagePath('lock', SUMMARY));
    // The replica takes the lock (replacing the one without expiry), fetches and stores the
    // summary for the others; before, it waited 10 × UPSTREAM_TIMEOUT_MS, then fetched alone, and
    // the lock stayed.
    await eventually(async () => {
      const { status, body } = await replica.execute(pageQuery('lock'));
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
      return (await raw.get(lock)) !== 'forged' && (await raw.exists(snapshot)) === 1;
    });
    expect(replica.simulator.requestCount(pagePath('lock', SUMMARY))).toBeGreaterThan(fetches);
    expect(replica.logs.slice(since).map((line) => line.msg)).not.toContain(
      'redis unavailable: this replica works alone until it is back',
    );
  });

  it('finding 7: a lock kept alive by someone else holds a reader back no longer than twice the lock time', async () => {
    const lock = `${PREFIX}lock:${sharedName('kept-lock', SUMMARY)}`;
    const snapshot = `${PREFIX}snapshot:${sharedName('kept-lock', SUMMARY)}`;
    // A lock time of 500 ms (`fresh`'s UPSTREAM_TIMEOUT_MS): it waits up to 1 s for its holder,
    // then fetches alone. Renewed as a replica renews its own: within the lock time, for
    // ever.
    await raw.set(lock, 'forged', 'PX', 500);
    const keeper = setInterval(() => void raw.set(lock, 'forged', 'PX', 500), 100);
    try {
      const fetches = fresh.simulator.requestCount(pagePath('kept-lock', SUMMARY));
      await eventually(async () => {
        const { status, body } = await fresh.execute(pageQuery('kept-lock'));
        expect(status).toBe(200);
        expect(body.errors).toBeUndefined();
        return fresh.simulator.requestCount(pagePath('kept-lock', SUMMARY)) > fetches;
      });
      // It fetched without the lock: nothing it could store for the others.
      expect(await raw.exists(snapshot)).toBe(0);
    } finally {
      clearInterval(keeper);
    }
  });
});
