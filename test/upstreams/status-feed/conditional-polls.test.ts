/**
 * Following pages cheaply, through the listener against the simulator: a page's own poll
 * interval, and polls that revalidate (the simulator's feeds send Statuspage's weak ETag, and a
 * page of static files `Last-Modified`), so that an unchanged document costs a 304: no body, no
 * rebuild, no change event.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../../simulator/src/status-feed/status-rollup.js';
import { eventually } from '../../helpers/eventually.js';
import { type Harness, startHarness } from '../../helpers/harness.js';
import { pagePath } from '../../helpers/own-pages.js';
import { statusPagesFile } from '../../helpers/status-pages-file.js';
import { subscribeSse } from '../../helpers/subscriptions.js';

const TTL_MS = 200;
/** `slow`'s own interval: ten TTLs. */
const INTERVAL_MS = 2_000;
const GITHUB = JSON.parse(
  readFileSync(new URL('../../fixtures/real-feeds/github/summary.json', import.meta.url), 'utf8'),
) as unknown;
/** When the static page's file was written: whole seconds, a minute ago. */
const WRITTEN = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);

interface ComponentChange {
  componentStatusChanged: { component: { id: string }; status: string };
}

const changesOf = (slug: string) =>
  `subscription { componentStatusChanged(slugs: ["${slug}"]) { component { id } status } }`;

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness({
    simulator: {
      statusPages: {
        slow: createSimulatedFeed(),
        steady: createSimulatedFeed(),
        dated: createSimulatedFeed(),
        odd: createSimulatedFeed(),
        files: { documents: { '/summary.json': GITHUB }, lastModified: WRITTEN },
      },
    },
    env: (simulator) => ({
      STATUS_PAGES_FILE: statusPagesFile([
        // The default page, what a readiness probe would read: none of the pages counted below.
        { slug: 'ledger', baseUrl: simulator.statusBaseUrl },
        { slug: 'slow', baseUrl: simulator.statusPageUrl('slow'), pollIntervalMs: INTERVAL_MS },
        ...['steady', 'dated', 'odd', 'files'].map((slug) => ({
          slug,
          baseUrl: simulator.statusPageUrl(slug),
        })),
      ]),
      STATUS_CACHE_TTL_MS: TTL_MS,
    }),
    logLevel: 'silent',
  });
});
afterAll(() => harness?.close());

/** When each request for `path` reached the simulator, in ms. */
const arrivals = (path: string) =>
  harness.simulator.requests
    .filter((request) => request.path === path)
    .map((request) => request.time.getTime());

describe('following a page cheaply', () => {
  it('polls a followed page once per its pollIntervalMs, each poll after the first a 304', async () => {
    const slow = pagePath('slow');
    const subscriber = await subscribeSse<ComponentChange>(harness.origin, changesOf('slow'));
    try {
      // Three polls, each answered (not one still in flight).
      await eventually(
        () =>
          harness.simulator.notModifiedCount(slow) >= 2 &&
          harness.simulator.notModifiedCount(slow) === arrivals(slow).length - 1,
        { timeoutMs: 15_000 },
      );
      const times = arrivals(slow);
      const gaps = times.slice(1).map((time, i) => time - (times[i] as number));
      // Never sooner than the page's interval (a request's arrival clock has 1 ms steps), where
      // the TTL alone would have polled every 200 ms.
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(INTERVAL_MS - 1);
      await eventually(
        async () =>
          (await harness.metric(
            'snapshot_cache_reads_total{endpoint="slow/summary.json",result="unchanged"}',
          )) >=
          times.length - 1,
      );
      expect(subscriber.events).toEqual([]);
    } finally {
      await subscriber.close();
    }
  });

  it('answers unchanged polls with 304s: one body, no change event; a change then, once', async () => {
    const steady = pagePath('steady');
    const subscriber = await subscribeSse<ComponentChange>(harness.origin, changesOf('steady'));
    try {
      await eventually(() => harness.simulator.notModifiedCount(steady) >= 5);
      // The gateway's requests answered in full (the test's own read of the ETag aside).
      let ownReads = 0;
      const fullAnswers = () =>
        harness.simulator.requestCount(steady) -
        harness.simulator.notModifiedCount(steady) -
        ownReads;
      // One document in full, built once; the rest confirmed it (once the poll in flight, if any,
      // is answered).
      await eventually(() => fullAnswers() === 1);
      const revalidations = harness.simulator.requests.filter((request) => request.path === steady);
      ownReads += 1;
      const etag = (await fetch(`${harness.simulator.origin}${steady}`)).headers.get('etag');
      expect(etag).toMatch(/^W\/"[0-9a-f]{32}"$/);
      // The weak ETag went back as it came.
      expect(revalidations.at(-1)?.headers['if-none-match']).toBe(etag);
      expect(subscriber.events).toEqual([]);
      expect(await harness.metric('status_changes_total{type="component"}')).toBe(0);

      const leaf = harness.simulator.statusFeed.summary.components.find((c) => c.group_id);
      if (!leaf) throw new Error('no grouped component');
      harness.simulator.updateStatusPage('steady', (feed) =>
        setComponentStatuses(feed, { [leaf.id]: 'major_outage' }),
      );
      await eventually(() =>
        subscriber.events.some(
          (event) => event.data?.componentStatusChanged.component.id === leaf.id,
        ),
      );
      // More unchanged polls after the change: it was told once.
      const seen = harness.simulator.notModifiedCount(steady);
      await eventually(() => harness.simulator.notModifiedCount(steady) >= seen + 3);
      const told = subscriber.events.filter(
        (event) => event.data?.componentStatusChanged.component.id === leaf.id,
      );
      expect(told).toHaveLength(1);
      expect(told[0]?.data?.componentStatusChanged.status).toBe('MAJOR_OUTAGE');
      // The change, in full: two bodies in all.
      await eventually(() => fullAnswers() === 2);
    } finally {
      await subscriber.close();
    }
  });

  it('says when a page was last confirmed in fetchedAt, from the same snapshot value', async () => {
    const dated = pagePath('dated');
    const query = '{ statusPage(slug: "dated") { fetchedAt status { indicator } } }';
    type Answer = { statusPage: { fetchedAt: string; status: { indicator: string } } };
    const first = (await harness.execute<Answer>(query)).body.data?.statusPage;
    // Past the TTL, a read refetches; the page has not changed, so the feed confirms it.
    const later = await eventually(async () => {
      const page = (await harness.executeAfterRefetch<Answer>(query)).body.data?.statusPage;
      return page && page.fetchedAt !== first?.fetchedAt && page;
    });
    // One body, the first; every refetch since was a 304.
    expect(harness.simulator.notModifiedCount(dated)).toBeGreaterThanOrEqual(1);
    expect(harness.simulator.requestCount(dated) - harness.simulator.notModifiedCount(dated)).toBe(
      1,
    );
    expect(Date.parse(later.fetchedAt)).toBeGreaterThan(Date.parse(first?.fetchedAt ?? ''));
    expect(later.status).toEqual(first?.status);
  });

  it('revalidates a page of static files with If-Modified-Since', async () => {
    const files = pagePath('files');
    const query = '{ statusPage(slug: "files") { name components { id status } } }';
    const first = await harness.execute(query);
    expect(first.body.errors).toBeUndefined();
    await eventually(
      async () => {
        await harness.executeAfterRefetch(query);
        return harness.simulator.notModifiedCount(files) >= 1;
      },
      { intervalMs: 50 },
    );
    const conditional = harness.simulator.requests.filter((request) => request.path === files);
    expect(conditional.at(-1)?.headers['if-modified-since']).toBe(WRITTEN.toUTCString());
    expect((await harness.execute(query)).body).toEqual(first.body);
  });

  it('takes a 304 to a request that named no version for a bad answer', async () => {
    const path = '/odd/api/v2/summary.json';
    harness.simulator.setFault('status', path, { kind: 'status', status: 304 }, { times: 1 });
    const refused = await harness.execute('{ statusPage(slug: "odd") { name } }');
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(refused.body.errors?.[0]?.message).toContain('304 Not Modified');
    // The next read fetches it whole.
    const answered = await harness.execute('{ statusPage(slug: "odd") { name } }');
    expect(answered.body.errors).toBeUndefined();
  });
});
