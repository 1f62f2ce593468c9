import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../simulator/src/server.js';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { fileClock } from '../helpers/clock.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { untilPagesLetGo } from '../helpers/own-pages.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';
import { subscribeSse } from '../helpers/subscriptions.js';

const NOW = new Date('2026-11-20T12:00:00Z');
const slugsOf = (count: number, prefix = 'p') =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`);
const SUMMARY = (slug: string) => `/status/${slug}/api/v2/summary.json`;

/** Harness options serving `slugs` as simulated feeds, each configured at its simulator page. */
const pagesOf = (slugs: readonly string[], env: Record<string, string | number> = {}) => ({
  simulator: {
    statusPages: Object.fromEntries(slugs.map((slug) => [slug, createSimulatedFeed({ now: NOW })])),
  },
  env: (simulator: Simulator) => ({
    STATUS_PAGES_FILE: statusPagesFile(
      slugs.map((slug) => ({ slug, baseUrl: simulator.statusPageUrl(slug) })),
    ),
    ...env,
  }),
  logLevel: 'debug' as const,
});

const NAMES = 'query ($slugs: [String!]) { statusPages(slugs: $slugs) { slug name } }';

/*
 * One gateway for the file, its pages each read by one test: a budget of 1 MB, pages let go as
 * soon as nobody asked for them (STATUS_PAGE_IDLE_MS of 1 ms) on a clock the tests move, which
 * stands still otherwise: no page is let go for being idle while a test does not move it. Each
 * test starts on a clock moved an hour, once the gateway has let every page go.
 */
const clock = fileClock();
const SLUGS = slugsOf(40);
/** Pages on one host, read by the test of its requests in flight alone. */
const HOSTED = slugsOf(10, 'h');
/** Three more pages than have labels of their own (`MAX_PAGE_LABELS`, 20), past the others. */
const UNLABELLED = slugsOf(3, 'c');
/** Pages read by the test of STATUS_PAGE_IDLE_MS alone. */
const IDLE = slugsOf(3, 'i');
/**
 * Room for about fifteen demo pages' summaries (66 KB each as estimated), not forty; a sixteenth
 * of it, what one document may hold, is above a summary's 37 KB.
 */
const MAX_BYTES = 1_000_000;
/** The cool-down of a page's circuit. */
const COOLDOWN_MS = 100;
/** The TTL of a snapshot. */
const TTL_MS = 500;
let harness: Harness;

beforeAll(async () => {
  harness = await startHarness(
    pagesOf([...SLUGS, ...HOSTED, ...UNLABELLED, ...IDLE], {
      STATUS_PAGES_MAX_BYTES: MAX_BYTES,
      STATUS_PAGE_IDLE_MS: 1,
      STATUS_CACHE_TTL_MS: TTL_MS,
      // A page's circuit opens at its first failure (after its retries), and lets a probe
      // through COOLDOWN_MS later.
      CIRCUIT_FAILURE_THRESHOLD: 1,
      CIRCUIT_COOLDOWN_MS: COOLDOWN_MS,
      // Forty pages through one host's four request slots: on a loaded machine the last waited
      // past the harness's 1 s timeout ("no answer within 1000 ms"), and a list's 1 s for any one
      // page (STATUS_OVERVIEW_DEADLINE_MS).
      UPSTREAM_TIMEOUT_MS: 10_000,
      STATUS_OVERVIEW_DEADLINE_MS: 10_000,
    }),
  );
});
afterAll(() => harness.close());
beforeEach(async () => {
  harness.simulator.clearFaults();
  clock.advance(60 * 60_000);
  // A page the test before stopped following after that was asked for then: the clock moves on
  // until it too is idle.
  await eventually(async () => {
    clock.advance(1);
    return (await harness.metric('status_pages_resident')) === 0;
  });
  await untilPagesLetGo(harness);
});

describe('status pages within STATUS_PAGES_MAX_BYTES', () => {
  it('keeps what pages hold under the budget however many are swept, and fetches a page let go again', async () => {
    const logged = harness.logs.length;
    const BUDGET_RELEASES = 'status_pages_released_total{reason="budget"}';
    const released = await harness.metric(BUDGET_RELEASES);
    for (let round = 0; round < 2; round += 1) {
      const { body } = await harness.execute<{ statusPages: { slug: string }[] }>(NAMES, {
        slugs: SLUGS,
      });
      expect(body.errors).toBeUndefined();
      expect(body.data?.statusPages).toHaveLength(SLUGS.length);
      const bytes = await harness.metric('status_pages_bytes');
      expect(bytes).toBeGreaterThan(0);
      expect(bytes).toBeLessThanOrEqual(MAX_BYTES);
    }
    const resident = await harness.metric('status_pages_resident');
    expect(resident).toBeGreaterThan(0);
    expect(resident).toBeLessThan(SLUGS.length);
    expect((await harness.metric(BUDGET_RELEASES)) - released).toBeGreaterThanOrEqual(
      SLUGS.length - resident,
    );
    expect(
      harness.logs.slice(logged).some((line) => String(line.msg).startsWith('status page let go')),
    ).toBe(true);
    // The first page was the least recently used: let go, and fetched again when asked for.
    const first = SLUGS[0] as string;
    const before = harness.simulator.requestCount(SUMMARY(first));
    const again = await harness.execute<{ statusPage: { slug: string; name: string } }>(
      `{ statusPage(slug: "${first}") { slug name } }`,
    );
    expect(again.body.errors).toBeUndefined();
    expect(again.body.data?.statusPage.slug).toBe(first);
    expect(harness.simulator.requestCount(SUMMARY(first))).toBe(before + 1);
  });

  it('keeps a followed page through a sweep, and reports its change once', async () => {
    const followed = SLUGS[5] as string;
    const polled = harness.simulator.requestCount(SUMMARY(followed));
    const changes = await subscribeSse<{
      componentStatusChanged: { page: { slug: string }; component: { id: string }; status: string };
    }>(
      harness.origin,
      `subscription { componentStatusChanged(slugs: ["${followed}"]) { page { slug } component { id } status } }`,
    );
    try {
      // The poller's first load is the baseline changes are found against.
      await eventually(() => harness.simulator.requestCount(SUMMARY(followed)) > polled);
      const letGo = () =>
        harness.logs.filter((line) => String(line.msg).startsWith('status page let go'));
      const before = letGo().length;
      for (let round = 0; round < 2; round += 1) {
        await harness.execute(NAMES, { slugs: SLUGS.filter((slug) => slug !== followed) });
        expect(await harness.metric('status_pages_bytes')).toBeLessThanOrEqual(MAX_BYTES);
      }
      // Others were let go to make room; never the followed page.
      const released = letGo().slice(before);
      expect(released.length).toBeGreaterThan(0);
      expect(released.filter((line) => line.slug === followed)).toEqual([]);

      const leaf = harness.simulator.statusFeed.summary.components.find(
        (c) => !c.group && !c.group_id,
      );
      if (!leaf) throw new Error('no top-level component');
      harness.simulator.updateStatusPage(followed, (feed) =>
        setComponentStatuses(feed, { [leaf.id]: 'major_outage' }),
      );
      // The page is read again once its snapshot expires: the poller finds the change.
      clock.advance(TTL_MS);
      const change = (await changes.next(15_000)).data?.componentStatusChanged;
      expect(change).toEqual({
        page: { slug: followed },
        component: { id: leaf.id },
        status: 'MAJOR_OUTAGE',
      });
      await harness.execute(`{ statusPage(slug: "${followed}") { name } }`);
      // Once: nothing else came for it.
      await expect(changes.next(500)).rejects.toThrow(/no event/);
    } finally {
      await changes.close();
    }
  }, 30_000);
});

describe('a page nobody asks for', () => {
  it('is let go after STATUS_PAGE_IDLE_MS', async () => {
    const IDLE_RELEASES = 'status_pages_released_total{reason="idle"}';
    const released = await harness.metric(IDLE_RELEASES);
    await harness.execute(NAMES, { slugs: ['i00', 'i01'] });
    expect(await harness.metric('status_pages_resident')).toBe(2);
    clock.advance(1);
    await eventually(async () => (await harness.metric('status_pages_resident')) === 0);
    expect((await harness.metric(IDLE_RELEASES)) - released).toBe(2);
    expect(await harness.metric('status_pages_bytes')).toBe(0);
    const { body } = await harness.execute(NAMES, { slugs: ['i00'] });
    expect(body.errors).toBeUndefined();
    expect(harness.simulator.requestCount(SUMMARY('i00'))).toBe(2);
  });

  it('is refused as a new follower once the followed pages hold the budget', async () => {
    // Eight demo pages, each with its four documents (134 KB as estimated), fill it.
    const first = await subscribeSse(
      harness.origin,
      `subscription { statusPageChanged(slugs: ${JSON.stringify(slugsOf(8))}) { slug } }`,
    );
    try {
      await first.next();
      await eventually(async () => (await harness.metric('status_pages_bytes')) >= MAX_BYTES);
      const second = await subscribeSse(
        harness.origin,
        'subscription { statusPageChanged(slugs: ["p08"]) { slug } }',
      );
      try {
        const refused = (await second.next()).errors?.[0];
        expect(refused?.extensions).toMatchObject({
          code: 'TOO_MANY_SUBSCRIPTIONS',
          limit: 'STATUS_PAGES_MAX_BYTES',
        });
      } finally {
        await second.close();
      }
      // Queries still read any page, each let go once answered.
      const { body } = await harness.execute(NAMES, { slugs: ['p08', 'p09'] });
      expect(body.errors).toBeUndefined();
      expect(harness.simulator.requestCount(SUMMARY('p08'))).toBe(1);
      // Following the followed page again needs no room.
      const again = await subscribeSse<{ statusPageChanged: { slug: string } }>(
        harness.origin,
        'subscription { statusPageChanged(slugs: ["p00"]) { slug } }',
      );
      try {
        expect((await again.next()).data?.statusPageChanged.slug).toBe('p00');
      } finally {
        await again.close();
      }
    } finally {
      await first.close();
    }
  });
});

describe('requests to one host', () => {
  it('are at most STATUS_FETCHES_PER_HOST in flight for the whole process, across aliases', async () => {
    harness.simulator.setFault('status', '*', { kind: 'delay', ms: 20 });
    try {
      harness.simulator.resetRequests();
      harness.simulator.concurrency('/status/');
      const aliases = Array.from(
        { length: 30 },
        (_, i) => `a${i}: statusPages(slugs: $slugs) { slug name }`,
      );
      const { body } = await harness.execute<Record<string, { slug: string }[]>>(
        `query ($slugs: [String!]) { ${aliases.join(' ')} }`,
        { slugs: HOSTED },
      );
      expect(body.errors).toBeUndefined();
      expect(body.data?.a29?.map((page) => page.slug)).toEqual(HOSTED);
      expect(harness.simulator.requests.length).toBeGreaterThanOrEqual(HOSTED.length);
      expect(harness.simulator.concurrency('/status/').peak).toBe(4);
    } finally {
      harness.simulator.clearFaults();
    }
  });
});

describe('circuits of pages past the labelled ones', () => {
  const [p20, p21, p22] = UNLABELLED as [string, string, string];

  it('are counted open, whatever order they change in', async () => {
    const OTHER = 'upstream_circuits_open{upstream="status_feed_other"}';
    expect(await harness.metric(OTHER)).toBe(0);
    for (const slug of [p20, p21, p22]) {
      harness.simulator.setFault('status', `/${slug}/api/v2/summary.json`, {
        kind: 'status',
        status: 503,
      });
    }
    const { body } = await harness.execute(NAMES, { slugs: [p20, p21, p22] });
    expect(body.errors).toHaveLength(3);
    expect(await harness.metric(OTHER)).toBe(3);
    // The last to change closes: the two still open are counted all the same.
    harness.simulator.setFault('status', `/${p22}/api/v2/summary.json`, null);
    clock.advance(COOLDOWN_MS);
    await eventually(async () => {
      const healed = await harness.execute(NAMES, { slugs: [p22] });
      return healed.body.errors === undefined;
    });
    expect(await harness.metric(OTHER)).toBe(2);
    const metrics = await (await harness.fetch('/metrics')).text();
    expect(metrics).not.toContain('upstream_circuit_state{upstream="status_feed_other"}');
    harness.simulator.clearFaults();
  });
});
