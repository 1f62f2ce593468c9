import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import {
  REDIS_INSTALL_TIMEOUT_MS,
  type RedisServer,
  startRedisServer,
} from '../helpers/redis-server.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';

const PREFIX = 'pages-test:';
/** More pages than have metric labels of their own (`MAX_PAGE_LABELS`, 20). */
const SLUGS = Array.from({ length: 25 }, (_, i) => `page-${i}`);

describe('status pages on one Redis, in the metrics', () => {
  let server: RedisServer;
  let harness: Harness;

  beforeAll(async () => {
    server = await startRedisServer();
    harness = await startHarness({
      simulator: {
        statusPages: Object.fromEntries(SLUGS.map((slug) => [slug, createSimulatedFeed()])),
      },
      env: (simulator) => ({
        STATUS_PAGES_FILE: statusPagesFile(
          SLUGS.map((slug) => ({ slug, baseUrl: simulator.statusPageUrl(slug) })),
        ),
        REDIS_URL: server.url,
        REDIS_KEY_PREFIX: PREFIX,
      }),
      logLevel: 'silent',
    });
    await eventually(async () => {
      const readiness = await (await harness.fetch('/readiness')).json();
      return readiness.redis?.state === 'connected';
    });
  }, REDIS_INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    await harness?.close();
    await server?.stop();
  });

  it('keeps each page under keys of its own slug, and labels pages past the 20th `other`', async () => {
    const { body } = await harness.execute(
      '{ statusPages(slugs: ["page-0", "page-1", "page-24"]) { slug name } }',
    );
    expect(body.errors).toBeUndefined();
    const raw = new Redis(server.url);
    try {
      const keys = (await raw.keys(`${PREFIX}snapshot:*`)).sort();
      expect(keys).toEqual(
        ['page-0', 'page-1', 'page-24'].map((slug) => `${PREFIX}snapshot:${slug}/summary.json`),
      );
    } finally {
      raw.disconnect();
    }
    const metrics = await (await harness.fetch('/metrics')).text();
    const upstreams = new Set(
      [...metrics.matchAll(/upstream_request_duration_seconds_count\{upstream="([^"]+)"/g)].map(
        (match) => match[1],
      ),
    );
    expect(upstreams).toEqual(
      new Set(['status_feed_page_0', 'status_feed_page_1', 'status_feed_other']),
    );
  });
});
