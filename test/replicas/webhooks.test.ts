/**
 * A Statuspage webhook on replicas sharing one Redis: whichever replica the webhook reaches fetches
 * the page, and the subscribers of every replica hear of the change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import {
  REDIS_INSTALL_TIMEOUT_MS,
  type RedisServer,
  startRedisServer,
} from '../helpers/redis-server.js';
import { type PageEntry, statusPagesFile } from '../helpers/status-pages-file.js';
import { subscribeSse } from '../helpers/subscriptions.js';

const MINUTE_MS = 60_000;
const TOKEN = '7c2e9a41b0d35f68e1c4a7b29d03f5e6c8a1b4d7e0f3a6c9b2e5d8f1a4c7e0b3';
const SUMMARY = (slug: string) => `/status/${slug}/api/v2/summary.json`;

describe('a webhook on replicas sharing one Redis', () => {
  let redis: RedisServer;
  let a: Harness;
  let b: Harness;

  beforeAll(async () => {
    redis = await startRedisServer();
    a = await startHarness({
      simulator: { statusPages: { alpha: createSimulatedFeed(), beta: createSimulatedFeed() } },
      env: (simulator) => ({
        STATUS_PAGES_FILE: pagesOf(simulator.statusPageUrl.bind(simulator)),
        ...env(),
      }),
      logLevel: 'silent',
    });
    // B reads the pages A's simulator serves: one upstream for both.
    b = await startHarness({
      env: { STATUS_PAGES_FILE: pagesOf((slug) => a.simulator.statusPageUrl(slug)), ...env() },
      logLevel: 'silent',
    });
    for (const replica of [a, b]) {
      await eventually(async () => {
        const readiness = await (await replica.fetch('/readiness')).json();
        return readiness.redis?.state === 'connected';
      });
    }

    function env() {
      return {
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: 'webhooks-test:',
        STATUS_CACHE_TTL_MS: MINUTE_MS,
        STATUS_POLL_INTERVAL_MS: MINUTE_MS,
      };
    }
    function pagesOf(url: (slug: string) => string) {
      const pages: (PageEntry & { webhookToken: string })[] = ['alpha', 'beta'].map((slug) => ({
        slug,
        baseUrl: url(slug),
        webhookToken: TOKEN,
      }));
      return statusPagesFile(pages);
    }
  }, REDIS_INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await redis?.stop();
  });

  it("reaches replica B's subscribers when it is posted to replica A, which never read the page", async () => {
    const changes = await subscribeSse<{
      componentStatusChanged: { component: { id: string }; status: string };
    }>(
      b.origin,
      'subscription { componentStatusChanged(slugs: ["alpha"]) { component { id } status } }',
    );
    try {
      // B's first reading, shared through Redis: the baseline the change is found against.
      const { body } = await b.execute('{ statusPage(slug: "alpha") { name } }');
      expect(body.errors).toBeUndefined();
      const leaf = a.simulator.statusFeed.summary.components.find((c) => c.group_id);
      if (!leaf) throw new Error('no grouped component');
      a.simulator.updateStatusPage('alpha', (feed) =>
        setComponentStatuses(feed, { [leaf.id]: 'major_outage' }),
      );
      const before = a.simulator.requestCount(SUMMARY('alpha'));
      // Beta, which no replica has read, has nothing to refetch: its webhook fetches nothing.
      const webhook = (slug: string) =>
        a.fetch(`/webhooks/statuspage/${slug}/${TOKEN}`, { method: 'POST', body: '{}' });
      expect((await webhook('beta')).status).toBe(202);
      expect((await webhook('alpha')).status).toBe(202);
      for (;;) {
        const change = (await changes.next())?.data?.componentStatusChanged;
        if (change?.component.id !== leaf.id) continue;
        expect(change.status).toBe('MAJOR_OUTAGE');
        break;
      }
      // A fetched the summary once for both replicas; B, whose poll waits a minute, did not.
      expect(a.simulator.requestCount(SUMMARY('alpha'))).toBe(before + 1);
      expect(a.simulator.requestCount(SUMMARY('beta'))).toBe(0);
    } finally {
      await changes.close();
    }
  });
});
