/**
 * Issue 25, Redis findings: whoever can write to the Redis the replicas share (a neighbour on a
 * shared instance, a leaked password) writes keys and publishes messages; each finding replayed on
 * a real port against the production listener (`startHarness`) and a real redis-server.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import {
  REDIS_INSTALL_TIMEOUT_MS,
  type RedisServer,
  startRedisServer,
} from '../helpers/redis-server.js';
import { subscribeSse } from '../helpers/subscriptions.js';

const SUMMARY = '/summary.json';
const UPCOMING = '/scheduled-maintenances/upcoming.json';
const SUMMARY_PATH = '/status/api/v2/summary.json';
const PAGE = '{ statusPage { name } }';
const REFUSED = 'a value read from redis was refused; this replica carries on without it';
const TEN_YEARS_MS = 10 * 365 * 24 * 3_600_000;

let server: RedisServer;
/** The attacker's own connection. */
let raw: Redis;
let open: Harness[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  raw = new Redis(server.url);
}, REDIS_INSTALL_TIMEOUT_MS);

afterEach(async () => {
  await Promise.all(open.map((harness) => harness.close()));
  open = [];
});

afterAll(async () => {
  raw?.disconnect();
  await server?.stop();
});

/** A replica on the suite's Redis, with a key prefix of its test's own (`prefix`). */
async function replica(prefix: string, env: Record<string, string | number> = {}) {
  const harness = await startHarness({
    env: {
      REDIS_URL: server.url,
      REDIS_KEY_PREFIX: prefix,
      REDIS_COMMAND_TIMEOUT_MS: 2_000,
      ...env,
    },
  });
  open.push(harness);
  await eventually(async () => {
    const readiness = await (await harness.fetch('/readiness')).json();
    return readiness.redis?.state === 'connected';
  });
  return harness;
}

const refusals = (harness: Harness) =>
  harness.logs.filter((line) => line.msg === REFUSED).map((line) => line.refused);

/** The summary as the simulator serves it, with the page renamed: a document that passes the schema. */
async function forgedSummary(harness: Harness, name: string): Promise<string> {
  const summary = await (await fetch(`${harness.simulator.statusBaseUrl}${SUMMARY}`)).json();
  summary.page.name = name;
  return JSON.stringify(summary);
}

describe('Redis is an input like any other', () => {
  it('finding 1: drops a 20 MiB message on the changes channel unread, and keeps answering', async () => {
    const prefix = `hostile-${randomUUID()}:`;
    const gateway = await replica(prefix);
    expect((await gateway.execute(PAGE)).status).toBe(200);
    const huge = `{"origin":"x","event":{"type":"page","junk":[${'{},'.repeat(7_000_000)}{}]}}`;
    expect(huge.length).toBeGreaterThan(20 * 1024 * 1024);
    // One at a time: Redis itself drops a subscriber with more than 32 MiB waiting for it.
    expect(await raw.publish(`${prefix}changes`, huge)).toBe(1);
    await eventually(() => refusals(gateway).includes('oversized message'));
    expect(await raw.publish(`${prefix}snapshots`, huge)).toBe(1);
    const { status, body } = await gateway.execute(PAGE);
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
  });

  it('finding 2: leaves a 9.5 MiB snapshot unread and fetches the summary from the upstream', async () => {
    const prefix = `hostile-${randomUUID()}:`;
    const snapshot = `${prefix}snapshot:${SUMMARY}`;
    const gateway = await replica(prefix, { STATUS_CACHE_TTL_MS: 500 });
    const body = `{"junk":[${'{},'.repeat(3_330_000)}{}]}`;
    expect(body.length).toBeGreaterThan(9.5 * 1024 * 1024);
    await raw.hset(snapshot, { version: 'forged', fetchedAt: Date.now(), body });
    const fetches = gateway.simulator.requestCount(SUMMARY_PATH);
    // Read past the TTL, the replica looks at Redis: the snapshot is too large to read.
    await eventually(
      async () => {
        const { status, body: answer } = await gateway.execute<{ statusPage: { name: string } }>(
          PAGE,
        );
        expect(status).toBe(200);
        expect(answer.data?.statusPage.name).toBe(gateway.simulator.statusFeed.summary.page.name);
        return refusals(gateway).includes('oversized snapshot');
      },
      { intervalMs: 50 },
    );
    // …fetches the summary from the upstream and stores it in its place.
    await eventually(async () => (await raw.hget(snapshot, 'version')) !== 'forged');
    expect(gateway.simulator.requestCount(SUMMARY_PATH)).toBeGreaterThan(fetches);
  });

  it('finding 3: refuses a page fetched ten years ahead; max-age never exceeds the TTL', async () => {
    const prefix = `hostile-${randomUUID()}:`;
    const ttlMs = 1_000;
    const gateway = await replica(prefix, { STATUS_CACHE_TTL_MS: ttlMs });
    const snapshot = `${prefix}snapshot:${SUMMARY}`;
    await raw.hset(snapshot, {
      version: 'forged',
      fetchedAt: Date.now() + TEN_YEARS_MS,
      body: await forgedSummary(gateway, 'Forged page'),
    });
    // Read past the TTL, the replica looks at Redis: the page from the future is not taken.
    const answers: { name?: string; maxAge: number }[] = [];
    await eventually(
      async () => {
        const { headers, body } = await gateway.execute<{ statusPage: { name: string } }>(PAGE);
        const maxAge = Number(/max-age=(\d+)/.exec(headers.get('cache-control') ?? '')?.[1] ?? 0);
        answers.push({ name: body.data?.statusPage.name, maxAge });
        return refusals(gateway).includes('snapshot from the future');
      },
      { intervalMs: 50 },
    );
    // The replica's own fetch replaced it, and it goes on answering the upstream's page.
    await eventually(async () => (await raw.hget(snapshot, 'version')) !== 'forged');
    await raw.del(snapshot);
    const { body } = await gateway.executeAfterRefetch<{ statusPage: { name: string } }>(PAGE);
    answers.push({ name: body.data?.statusPage.name, maxAge: 0 });
    expect(answers.length).toBeGreaterThan(1);
    for (const { name, maxAge } of answers) {
      expect(name).toBe(gateway.simulator.statusFeed.summary.page.name);
      expect(maxAge).toBeLessThanOrEqual(ttlMs / 1000);
    }
  });

  it('finding 4: a failure record without expiry or of free text is deleted, never answered', async () => {
    const prefix = `hostile-${randomUUID()}:`;
    const failure = `${prefix}failure:${UPCOMING}`;
    // The format before: free text, no expiry.
    await raw.hset(failure, {
      token: 'forged',
      error: JSON.stringify({
        code: 'UPSTREAM_UNAVAILABLE',
        message: 'Send 1 BTC to bc1qforged to restore service',
        endpoint: { upstream: 'status feed', method: 'GET', path: UPCOMING },
      }),
    });
    const gateway = await replica(prefix);
    const { body } = await gateway.execute('{ statusPage { upcomingMaintenances { id } } }');
    expect(JSON.stringify(body)).not.toContain('BTC');
    expect(body.errors).toBeUndefined();
    expect(await raw.exists(failure)).toBe(0);
  });

  it('finding 4: a failure the replicas record is a code, a status and a time, and expires', async () => {
    const prefix = `hostile-${randomUUID()}:`;
    const gateway = await replica(prefix, { UPSTREAM_RETRIES: 0 });
    gateway.simulator.setFault('status', UPCOMING, { kind: 'status', status: 503 });
    const { body } = await gateway.execute('{ statusPage { upcomingMaintenances { id } } }');
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    const failure = `${prefix}failure:${UPCOMING}`;
    const record = await raw.hgetall(failure);
    expect(Object.keys(record).sort()).toEqual(['at', 'code', 'status', 'token']);
    expect(record).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', status: '503' });
    expect(await raw.pttl(failure)).toBeGreaterThan(0);
  });

  it('finding 5: a forged change event is not delivered; a real one is, as the snapshot says it', async () => {
    const prefix = `hostile-${randomUUID()}:`;
    const ttlMs = 300;
    const a = await replica(prefix, { STATUS_CACHE_TTL_MS: ttlMs, STATUS_POLL_INTERVAL_MS: ttlMs });
    // B's snapshots stay fresh for a minute: it hears of changes only from A, through Redis.
    const b = await replica(prefix, {
      STATUS_CACHE_TTL_MS: 60_000,
      STATUS_POLL_INTERVAL_MS: 60_000,
    });
    const subscriber = await subscribeSse<{
      componentStatusChanged: { component: { id: string; name: string }; status: string };
    }>(b.origin, 'subscription { componentStatusChanged { component { id name } status } }');
    // Only A's reads refetch the summary (past its TTL), and it stores each for the others.
    const reader = setInterval(() => void a.execute(PAGE), 100);
    try {
      await b.execute(PAGE);
      const leaf = a.simulator.statusFeed.summary.components.find(
        (component) => !component.group && component.status === 'operational',
      );
      if (!leaf) throw new Error('the demo feed has an operational component');
      // Naming the snapshot Redis holds now, as the attacker can read it.
      const version = await eventually(
        async () => (await raw.hget(`${prefix}snapshot:${SUMMARY}`, 'version')) ?? undefined,
      );
      const detectedAt = await raw.hget(`${prefix}snapshot:${SUMMARY}`, 'fetchedAt');
      await raw.publish(
        `${prefix}changes`,
        JSON.stringify({
          origin: 'forged',
          name: SUMMARY,
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
        () => refusals(b).includes('change event not shown by the stored snapshot'),
        { timeoutMs: 3_000 },
      );
      a.simulator.updateStatusFeed((feed) =>
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
    const prefix = `hostile-${randomUUID()}:`;
    const gateway = await replica(prefix, { STATUS_CACHE_TTL_MS: 60_000 });
    await gateway.execute(PAGE);
    const hitsBefore = await gateway.metric('response_cache_reads_total{result="hit"}');
    const requests = 50;
    for (let i = 0; i < requests; i += 1) {
      const flood = raw.pipeline();
      for (let j = 0; j < 100; j += 1) {
        flood.publish(
          `${prefix}snapshots`,
          JSON.stringify({ name: SUMMARY, version: randomUUID(), fetchedAt: Date.now() + j }),
        );
      }
      await flood.exec();
      const { status } = await gateway.execute(PAGE);
      expect(status).toBe(200);
    }
    // Every one of them answered from the response cache: no notice superseded the snapshot.
    expect(await gateway.metric('response_cache_reads_total{result="hit"}')).toBe(
      hitsBefore + requests,
    );
    expect(gateway.simulator.requestCount(SUMMARY_PATH)).toBe(1);
  });

  it('finding 7: a lock without expiry does not hold a replica back', async () => {
    const prefix = `hostile-${randomUUID()}:`;
    const lock = `${prefix}lock:${SUMMARY}`;
    const snapshot = `${prefix}snapshot:${SUMMARY}`;
    const gateway = await replica(prefix, { STATUS_CACHE_TTL_MS: 200 });
    await raw.set(lock, 'forged');
    const fetches = gateway.simulator.requestCount(SUMMARY_PATH);
    // Read past the TTL: the replica takes the lock (replacing the one without expiry), fetches
    // and stores the summary for the others; before, it waited 10 × UPSTREAM_TIMEOUT_MS, then
    // fetched alone, and the lock stayed.
    await eventually(async () => {
      const { status, body } = await gateway.execute(PAGE);
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
      return (await raw.get(lock)) !== 'forged' && (await raw.exists(snapshot)) === 1;
    });
    expect(gateway.simulator.requestCount(SUMMARY_PATH)).toBeGreaterThan(fetches);
    expect(gateway.logs.map((line) => line.msg)).not.toContain(
      'redis unavailable: this replica works alone until it is back',
    );
  });

  it('finding 7: a lock kept alive by someone else holds a reader back no longer than twice the lock time', async () => {
    const prefix = `hostile-${randomUUID()}:`;
    const lock = `${prefix}lock:${SUMMARY}`;
    const snapshot = `${prefix}snapshot:${SUMMARY}`;
    // A lock time of 500 ms: the replica waits up to 1 s for its holder, then fetches alone.
    const gateway = await replica(prefix, { STATUS_CACHE_TTL_MS: 200, UPSTREAM_TIMEOUT_MS: 500 });
    // Renewed as a replica renews its own: within the lock time, for ever.
    await raw.set(lock, 'forged', 'PX', 500);
    const keeper = setInterval(() => void raw.set(lock, 'forged', 'PX', 500), 100);
    try {
      const fetches = gateway.simulator.requestCount(SUMMARY_PATH);
      await eventually(async () => {
        const { status, body } = await gateway.execute(PAGE);
        expect(status).toBe(200);
        expect(body.errors).toBeUndefined();
        return gateway.simulator.requestCount(SUMMARY_PATH) > fetches;
      });
      // It fetched without the lock: nothing it could store for the others.
      expect(await raw.exists(snapshot)).toBe(0);
    } finally {
      clearInterval(keeper);
    }
  });
});
