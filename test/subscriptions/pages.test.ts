import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';
import { subscribeSse } from '../helpers/subscriptions.js';

const TTL_MS = 150;
const SUMMARY = (slug: string) => `/status/${slug}/api/v2/summary.json`;

interface ComponentChange {
  componentStatusChanged: {
    page: { slug: string };
    component: { id: string; page: { slug: string } };
    status: string;
  };
}

describe('subscriptions of some pages', () => {
  let harness: Harness;

  beforeAll(async () => {
    // The same feed twice: the same component ids on both pages, told apart by their page alone.
    harness = await startHarness({
      simulator: { statusPages: { alpha: createSimulatedFeed(), beta: createSimulatedFeed() } },
      env: (simulator) => ({
        STATUS_PAGES_FILE: statusPagesFile(
          ['ledger', 'alpha', 'beta'].map((slug) => ({
            slug,
            baseUrl: slug === 'ledger' ? simulator.statusBaseUrl : simulator.statusPageUrl(slug),
          })),
        ),
        STATUS_CACHE_TTL_MS: TTL_MS,
      }),
      logLevel: 'silent',
    });
  });
  afterAll(() => harness.close());

  it('hears of the changes of the pages it names only, and polls those alone', async () => {
    const query = (slug: string) =>
      `subscription { componentStatusChanged(slugs: ["${slug}"]) { page { slug } component { id page { slug } } status } }`;
    const [alpha, beta] = await Promise.all(
      ['alpha', 'beta'].map((slug) => subscribeSse<ComponentChange>(harness.origin, query(slug))),
    );
    try {
      // Two polls of each: the first load, the baseline changes are found against, is in.
      await eventually(
        () =>
          harness.simulator.requestCount(SUMMARY('alpha')) >= 2 &&
          harness.simulator.requestCount(SUMMARY('beta')) >= 2,
      );
      const leaf = harness.simulator.statusFeed.summary.components.find((c) => c.group_id);
      if (!leaf) throw new Error('no grouped component');
      const statuses = { alpha: 'MAJOR_OUTAGE', beta: 'PARTIAL_OUTAGE' } as const;
      for (const slug of ['alpha', 'beta'] as const) {
        harness.simulator.updateStatusPage(slug, (feed) =>
          setComponentStatuses(feed, {
            [leaf.id]: slug === 'alpha' ? 'major_outage' : 'partial_outage',
          }),
        );
      }
      for (const [slug, changes] of [
        ['alpha', alpha],
        ['beta', beta],
      ] as const) {
        // Until the component's own change: every event before it (its group's) is of its page too.
        for (;;) {
          const change = (await changes?.next())?.data?.componentStatusChanged;
          expect(change).toMatchObject({
            page: { slug },
            component: { page: { slug } },
            status: statuses[slug],
          });
          if (change?.component.id === leaf.id) break;
        }
      }
      // The default page is no one's: never read.
      expect(harness.simulator.requestCount('/status/api/v2/summary.json')).toBe(0);
    } finally {
      await Promise.all([alpha?.close(), beta?.close()]);
    }
  });

  it('starts with the first page of each page it names, in configuration order', async () => {
    const pages = await subscribeSse<{ statusPageChanged: { slug: string; name: string } }>(
      harness.origin,
      'subscription { statusPageChanged(slugs: ["beta", "ledger"]) { slug name } }',
    );
    try {
      const slugs = [(await pages.next()).data, (await pages.next()).data].map(
        (data) => data?.statusPageChanged.slug,
      );
      expect(slugs).toEqual(['ledger', 'beta']);
      // A second client of the same request: every page too (such a subscription is not shared,
      // since a late subscriber of a shared one would start with one page only).
      const second = await subscribeSse<{ statusPageChanged: { slug: string; name: string } }>(
        harness.origin,
        'subscription { statusPageChanged(slugs: ["beta", "ledger"]) { slug name } }',
      );
      try {
        const again = [(await second.next()).data, (await second.next()).data].map(
          (data) => data?.statusPageChanged.slug,
        );
        expect(again).toEqual(['ledger', 'beta']);
      } finally {
        await second.close();
      }
    } finally {
      await pages.close();
    }
  });

  it('refuses a slug nobody configured', async () => {
    const refused = await subscribeSse<unknown>(
      harness.origin,
      'subscription { incidentChanged(slugs: ["nope"]) { kind } }',
    );
    try {
      const event = (await refused.next()) as { errors?: { extensions?: { code?: string } }[] };
      expect(event.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    } finally {
      await refused.close();
    }
  });
});
