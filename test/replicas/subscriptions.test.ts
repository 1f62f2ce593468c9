/**
 * Subscriptions across replicas: two gateway processes (the production entry) on one simulator and
 * one real redis-server. A change is found once, by whichever replica fetched the summary, and
 * reaches the subscribers of every replica.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../simulator/src/server.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { eventually } from '../helpers/eventually.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.js';
import {
  REDIS_INSTALL_TIMEOUT_MS,
  type RedisServer,
  startRedisServer,
} from '../helpers/redis-server.js';
import { subscribeSse } from '../helpers/subscriptions.js';

const TTL_MS = 500;
const SUMMARY = '/status/api/v2/summary.json';
const SUMMARY_FETCHES =
  'upstream_request_duration_seconds_count{upstream="status_feed",method="GET",endpoint="/summary.json",status="200"}';
const CHANGES = `subscription {
  componentStatusChanged { component { id status } previousStatus status }
}`;

let redis: RedisServer;
let simulator: Simulator;
let a: GatewayProcess;
let b: GatewayProcess;

beforeAll(async () => {
  redis = await startRedisServer();
  simulator = await startSimulator();
  const env = (pollIntervalMs: number) => ({
    NODE_ENV: 'production',
    STATUS_BASE_URL: simulator.statusBaseUrl,
    VERIFY_BASE_URL: simulator.verifyBaseUrl,
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: 'replica-subscriptions:',
    REDIS_COMMAND_TIMEOUT_MS: '2000',
    STATUS_CACHE_TTL_MS: String(TTL_MS),
    STATUS_POLL_INTERVAL_MS: String(pollIntervalMs),
  });
  // B's poller waits a minute between reads: within the test only A's queries fetch the feed.
  [a, b] = await Promise.all([
    startGatewayProcess('A', env(TTL_MS)),
    startGatewayProcess('B', env(60_000)),
  ]);
  for (const replica of [a, b]) {
    await eventually(
      async () => ((await replica.readiness()).redis?.state === 'connected' ? true : undefined),
      {
        timeoutMs: 10_000,
        intervalMs: 50,
      },
    );
  }
}, REDIS_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await simulator?.close();
  await redis?.stop();
});

describe('subscriptions on replicas sharing one Redis', () => {
  it("deliver to a subscriber on replica B a change first seen by replica A's fetch", async () => {
    const subscriber = await subscribeSse<{
      componentStatusChanged: {
        component: { id: string; status: string };
        previousStatus: string;
        status: string;
      };
    }>(b.origin, CHANGES);
    // B's poller takes its first reading (the baseline), then sleeps for a minute. A probe of B's
    // readiness reads the summary through the same cache: it waits for that reading.
    await eventually(async () => {
      const { statusFeed } = (await b.readiness()) as { statusFeed?: { state: string } };
      return statusFeed?.state === 'ok';
    });

    const leaf = simulator.statusFeed.summary.components.find(
      (component) => !component.group && component.status === 'operational',
    );
    if (!leaf) throw new Error('the demo feed has an operational component');
    const aFetchesBefore = (await a.metric(SUMMARY_FETCHES)) ?? 0;
    const bFetchesBefore = (await b.metric(SUMMARY_FETCHES)) ?? 0;
    simulator.resetRequests();
    simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [leaf.id]: 'partial_outage' }),
    );

    // Only A is asked: its reads past the TTL refetch the summary and diff it.
    const reader = setInterval(
      () => void a.execute('{ statusPage { status { indicator } } }'),
      100,
    );
    try {
      const event = await subscriber.next(10_000);
      expect(event.data?.componentStatusChanged).toEqual({
        component: { id: leaf.id, status: 'PARTIAL_OUTAGE' },
        previousStatus: 'OPERATIONAL',
        status: 'PARTIAL_OUTAGE',
      });
    } finally {
      clearInterval(reader);
      await subscriber.close();
    }
    // The summary was fetched after the change, and not by B.
    expect(simulator.requestCount(SUMMARY)).toBeGreaterThan(0);
    expect(await a.metric(SUMMARY_FETCHES)).toBeGreaterThan(aFetchesBefore);
    expect((await b.metric(SUMMARY_FETCHES)) ?? 0).toBe(bFetchesBefore);
  });
});
