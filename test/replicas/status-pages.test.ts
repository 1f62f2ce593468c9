/**
 * Replicas serving several status pages through one real redis-server: each page's documents are
 * fetched once per TTL across the replicas, under keys of the page's own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../simulator/src/server.js';
import { eventually } from '../helpers/eventually.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.js';
import {
  REDIS_INSTALL_TIMEOUT_MS,
  type RedisServer,
  startRedisServer,
} from '../helpers/redis-server.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';
import { steadyLoad } from '../helpers/steady-load.js';

const TTL_MS = 1_000;
/** The simulator's own pages: the ledger demo, and the two vendor pages it serves by default. */
const SLUGS = ['ledger', 'cloud', 'ai-vendor'] as const;

let redis: RedisServer;
let simulator: Simulator;
let replicas: GatewayProcess[] = [];

const summaryOf = (slug: string) =>
  slug === 'ledger' ? '/status/api/v2/summary.json' : `/status/${slug}/api/v2/summary.json`;

beforeAll(async () => {
  redis = await startRedisServer();
  simulator = await startSimulator();
  const pages = statusPagesFile(
    SLUGS.map((slug) => ({
      slug,
      baseUrl: slug === 'ledger' ? simulator.statusBaseUrl : simulator.statusPageUrl(slug),
    })),
  );
  replicas = await Promise.all(
    ['A', 'B'].map((name) =>
      startGatewayProcess(name, {
        NODE_ENV: 'production',
        STATUS_PAGES_FILE: pages,
        VERIFY_BASE_URL: simulator.verifyBaseUrl,
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: 'pages-test:',
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

describe('replicas serving several pages on one Redis', () => {
  it('fetch each page’s summary once per TTL across both, under load', async () => {
    const loadMs = 5 * TTL_MS;
    simulator.resetRequests();
    const started = Date.now();
    // Four clients per replica, each operation new (read through the snapshot caches, not the
    // response cache), every one over all three pages.
    const answers = await steadyLoad({ clients: 8, forMs: loadMs }, async (client, n) => {
      const replica = replicas[client % 2] as GatewayProcess;
      const { status, body } = await replica.execute(
        `{ statusPages { slug status { indicator } } n${n}: __typename }`,
      );
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
    });
    const elapsed = Date.now() - started;
    const counts = Object.fromEntries(
      SLUGS.map((slug) => [slug, simulator.requestCount(summaryOf(slug))]),
    );
    for (const slug of SLUGS) {
      // One per TTL, whichever replica asked: a page's summary is fetched again only once the one
      // before has run its TTL; two replicas each alone, or pages overwriting each other's
      // snapshots, would fetch within it. However slow the machine, never closer.
      const times = simulator.requests
        .filter((request) => request.path === summaryOf(slug))
        .map((request) => request.time.getTime());
      const gaps = times.slice(1).map((time, i) => time - (times[i] ?? 0));
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(TTL_MS);
      // …and refreshed all along.
      expect(counts[slug]).toBeGreaterThanOrEqual(3);
    }
    expect(answers).toBeGreaterThan(50);
    console.info(
      `${answers} answers over three pages in ${elapsed} ms on two replicas (TTL ${TTL_MS} ms): summaries upstream ${JSON.stringify(counts)}`,
    );
  });
});
