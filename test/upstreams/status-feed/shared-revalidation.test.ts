/**
 * Two replicas (the production entry, each in its own process) on one real redis-server, reading
 * a page whose feed sends ETags: they still fetch it once per TTL between them, those fetches are
 * 304s while the page does not change, and each replica serves the confirmation the other got.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../../simulator/src/server.js';
import { setComponentStatuses } from '../../../simulator/src/status-feed/status-rollup.js';
import { eventually } from '../../helpers/eventually.js';
import { type GatewayProcess, startGatewayProcess } from '../../helpers/gateway-process.js';
import {
  REDIS_INSTALL_TIMEOUT_MS,
  type RedisServer,
  startRedisServer,
} from '../../helpers/redis-server.js';
import { statusPagesFile } from '../../helpers/status-pages-file.js';

const TTL_MS = 400;
const SUMMARY = '/status/cloud/api/v2/summary.json';
const UNCHANGED = 'snapshot_cache_reads_total{endpoint="cloud/summary.json",result="unchanged"}';

let redis: RedisServer;
let simulator: Simulator;
let replicas: GatewayProcess[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
  simulator = await startSimulator();
  // The default page is what readiness reads, maybe before a replica has joined Redis (and then
  // alone): `cloud` is read by the test only.
  const pages = statusPagesFile([
    { slug: 'ledger', baseUrl: simulator.statusBaseUrl },
    { slug: 'cloud', baseUrl: simulator.statusPageUrl('cloud') },
  ]);
  replicas = await Promise.all(
    ['A', 'B'].map((name) =>
      startGatewayProcess(name, {
        NODE_ENV: 'production',
        STATUS_PAGES_FILE: pages,
        VERIFY_BASE_URL: simulator.verifyBaseUrl,
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: 'revalidation-test:',
        REDIS_COMMAND_TIMEOUT_MS: '2000',
        STATUS_CACHE_TTL_MS: String(TTL_MS),
      }),
    ),
  );
  for (const replica of replicas) {
    await eventually(async () => (await replica.readiness()).redis?.state === 'connected', {
      timeoutMs: 10_000,
      intervalMs: 50,
    });
  }
}, REDIS_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.stop()));
  await simulator?.close();
  await redis?.stop();
});

/** The gateway's requests for the summary answered in full. */
const fullAnswers = () => simulator.requestCount(SUMMARY) - simulator.notModifiedCount(SUMMARY);

describe('replicas sharing a page that revalidates', () => {
  it('share its 304s: once per TTL between them, each serving the other’s confirmation', async () => {
    const [a, b] = replicas as [GatewayProcess, GatewayProcess];
    let n = 0;
    /** `cloud`'s fetch time as `replica` serves it, through an operation of its own. */
    const fetchedAt = async (replica: GatewayProcess) => {
      n += 1;
      const { body } = await replica.execute<{ statusPage: { fetchedAt: string } }>(
        `{ statusPage(slug: "cloud") { fetchedAt } n${n}: __typename }`,
      );
      expect(body.errors).toBeUndefined();
      return Date.parse(body.data?.statusPage.fetchedAt ?? '');
    };
    const first = Math.min(await fetchedAt(a), await fetchedAt(b));
    // Both replicas read on, in turn, until the feed has confirmed the page several times.
    const seen = { A: [] as number[], B: [] as number[] };
    await eventually(
      async () => {
        seen.A.push(await fetchedAt(a));
        seen.B.push(await fetchedAt(b));
        return simulator.notModifiedCount(SUMMARY) >= 4;
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    // One body, the first; every refetch since, whichever replica made it, a 304.
    await eventually(() => fullAnswers() === 1);
    const arrivals = simulator.requests
      .filter((request) => request.path === SUMMARY)
      .map((request) => request.time.getTime());
    const gaps = arrivals.slice(1).map((time, i) => time - (arrivals[i] as number));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(TTL_MS - 1);
    // Each 304 reached one replica, which told its metric.
    const own = async (replica: GatewayProcess) => (await replica.metric(UNCHANGED)) ?? 0;
    await eventually(
      async () => (await own(a)) + (await own(b)) === simulator.notModifiedCount(SUMMARY),
    );
    // Between them the replicas served more confirmations than they got: one served the other's.
    const served = (times: number[]) => new Set(times.filter((time) => time > first)).size;
    expect(served(seen.A)).toBeGreaterThan(0);
    expect(served(seen.B)).toBeGreaterThan(0);
    expect(served(seen.A) + served(seen.B)).toBeGreaterThan((await own(a)) + (await own(b)));

    // A change after the run of 304s: fetched whole, once, and served by both.
    let leaf = '';
    simulator.updateStatusPage('cloud', (feed) => {
      leaf = feed.summary.components.find((component) => component.group_id)?.id ?? '';
      setComponentStatuses(feed, { [leaf]: 'major_outage' });
    });
    for (const replica of [a, b]) {
      await eventually(
        async () => {
          n += 1;
          const { body } = await replica.execute<{ component: { status: string } }>(
            `{ component(id: "${leaf}", slug: "cloud") { status } n${n}: __typename }`,
          );
          return body.data?.component.status === 'MAJOR_OUTAGE';
        },
        { intervalMs: 50 },
      );
    }
    expect(fullAnswers()).toBe(2);
  });
});
