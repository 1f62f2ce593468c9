import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../simulator/src/server.js';
import {
  createSimulatedFeed,
  STATUS_FEED_PRESETS,
} from '../../simulator/src/status-feed/fixture.js';
import { PAGE_TREE_QUERY } from '../../src/http/page-tree-query.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';

const NOW = new Date('2026-11-20T12:00:00Z');
const SLUGS = Array.from({ length: 200 }, (_, i) => `p${String(i).padStart(3, '0')}`);
/**
 * The pages the simulator serves beside the default one (p000, the page-tree test's) and those the
 * tests set themselves; every other configured page would answer 404.
 */
const SERVED = ['p010', 'p100', 'p199'] as const;
/** Served pages that one test alone reads: it counts what it fetches. */
const READ_ONCE = ['p011', 'p101', 'p198'] as const;

/** A `STATUS_PAGES_FILE` of `slugs`, each at the simulator's page of that slug. */
const pagesFile = (simulator: Simulator, slugs: readonly string[]) =>
  statusPagesFile(slugs.map((slug) => ({ slug, baseUrl: simulator.statusPageUrl(slug) })));

/** Requests the simulator got for page `slug`'s documents. */
const pageRequests = (simulator: Simulator, slug: string) =>
  simulator.requests.filter((request) => request.path.startsWith(`/status/${slug}/`)).length;

/** One feed, served as the default page of the many pages and as the one page of STATUS_BASE_URL. */
const feed = createSimulatedFeed({ now: NOW });
/** Two pages of the same feed (the same component ids), that the entities test alone reads. */
const ENTITY_PAGES = {
  p150: createSimulatedFeed({ now: NOW }),
  p151: createSimulatedFeed({ now: NOW }),
};
/**
 * Three pages of 500 components, that the cost test alone reads: one page's components are within
 * MAX_RESOLVED_FIELDS, three are not, while the page tree of the default page and the lists of the
 * many pages are.
 */
const LARGE_PAGES = ['p160', 'p161', 'p162'] as const;
const MAX_RESOLVED_FIELDS = 2_000;

/** Two hundred pages from a STATUS_PAGES_FILE. */
let harness: Harness;
/** The same default page from STATUS_BASE_URL: a gateway configured the other way. */
let viaUrl: Harness;

beforeAll(async () => {
  [harness, viaUrl] = await Promise.all([
    startHarness({
      simulator: {
        statusPages: {
          p000: feed,
          ...Object.fromEntries(
            [...SERVED, ...READ_ONCE].map((slug) => [slug, createSimulatedFeed({ now: NOW })]),
          ),
          ...ENTITY_PAGES,
          ...Object.fromEntries(
            LARGE_PAGES.map((slug) => [
              slug,
              createSimulatedFeed({ now: NOW, ...STATUS_FEED_PRESETS.large }),
            ]),
          ),
        },
      },
      env: (simulator) => ({ STATUS_PAGES_FILE: pagesFile(simulator, SLUGS), MAX_RESOLVED_FIELDS }),
    }),
    startHarness({ simulator: { statusFeed: feed } }),
  ]);
});
afterAll(() => Promise.all([harness.close(), viaUrl.close()]));
beforeEach(() => {
  for (const { simulator } of [harness, viaUrl]) {
    simulator.clearFaults();
    simulator.resetRequests();
  }
});

describe('many status pages', () => {
  it('of 200 configured pages, fetches only the three a query names', async () => {
    const { body } = await harness.execute<{ statusPages: { slug: string; name: string }[] }>(
      '{ statusPages(slugs: ["p198", "p011", "p101"]) { slug name components { id page { slug } } } }',
    );
    expect(body.errors).toBeUndefined();
    // Configuration order, whatever the order asked.
    expect(body.data?.statusPages.map((page) => page.slug)).toEqual(['p011', 'p101', 'p198']);
    expect(harness.simulator.requests.map((request) => request.path).sort()).toEqual(
      READ_ONCE.map((slug) => `/status/${slug}/api/v2/summary.json`),
    );
  });

  it("reads a component's nested fields from its own page", async () => {
    const { body } = await harness.execute<{
      statusPage: { slug: string; components: { page: { slug: string } }[] };
    }>('{ statusPage(slug: "p100") { slug components { page { slug } incidentHistory { id } } } }');
    expect(body.errors).toBeUndefined();
    expect(body.data?.statusPage.slug).toBe('p100');
    expect(new Set(body.data?.statusPage.components.map((c) => c.page.slug))).toEqual(
      new Set(['p100']),
    );
    expect(harness.simulator.requestCount('/status/p100/api/v2/incidents.json')).toBe(1);
    expect(pageRequests(harness.simulator, 'p010') + pageRequests(harness.simulator, 'p199')).toBe(
      0,
    );
  });

  it('answers the other pages when one of them 404s, with an error naming it', async () => {
    const { status, body } = await harness.execute<{ statusPages: { slug: string }[] }>(
      '{ statusPages(slugs: ["p010", "p050"]) { slug name } }',
    );
    expect(status).toBe(200);
    expect(body.data?.statusPages.map((page) => page.slug)).toEqual(['p010']);
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^The status feed of page p050 GET \/summary\.json /),
        path: ['statusPages'],
        extensions: expect.objectContaining({ code: 'UPSTREAM_UNAVAILABLE', slug: 'p050' }),
      }),
    ]);
    const one = await harness.execute('{ statusPage(slug: "p050") { name } }');
    expect(one.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    // Readiness reads no page of several: ready, whatever they answer.
    harness.simulator.resetRequests();
    const ready = await harness.fetch('/readiness');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true });
    expect(harness.simulator.requests).toEqual([]);
  });

  it('answers the other pages when one answers garbage or nothing', async () => {
    harness.simulator.setStatusPage('p020', createSimulatedFeed({ now: NOW }));
    harness.simulator.setStatusPage('p030', createSimulatedFeed({ now: NOW }));
    harness.simulator.setFault('status', '/p020/api/v2/summary.json', { kind: 'html' });
    harness.simulator.setFault('status', '/p030/api/v2/summary.json', { kind: 'hang' });
    try {
      const { body } = await harness.execute<{ statusPages: { slug: string; name: string }[] }>(
        '{ statusPages(slugs: ["p010", "p020", "p030", "p100"]) { slug name } }',
      );
      expect(body.data?.statusPages.map((page) => page.slug)).toEqual(['p010', 'p100']);
      expect(body.errors?.map((error) => error.extensions?.slug)).toEqual(['p020', 'p030']);
    } finally {
      harness.simulator.clearFaults();
    }
  });

  it('reads the pages of one host four at a time', async () => {
    const slugs = SLUGS.slice(40, 50);
    for (const slug of slugs)
      harness.simulator.setStatusPage(slug, createSimulatedFeed({ now: NOW }));
    harness.simulator.setFault('status', '*', { kind: 'delay', ms: 100 });
    try {
      harness.simulator.resetRequests();
      // Asking starts keeping the peak.
      harness.simulator.concurrency('/status/');
      const { body } = await harness.execute<{ statusPages: { slug: string }[] }>(
        'query ($slugs: [String!]) { statusPages(slugs: $slugs) { slug name } }',
        { slugs },
      );
      expect(body.errors).toBeUndefined();
      expect(body.data?.statusPages.map((page) => page.slug)).toEqual(slugs);
      expect(harness.simulator.requests).toHaveLength(10);
      expect(harness.simulator.concurrency('/status/').peak).toBe(4);
    } finally {
      harness.simulator.clearFaults();
    }
  });

  it('refuses an unknown slug, and too many, before reading anything', async () => {
    const unknown = await harness.execute('{ statusPage(slug: "nope") { name } }');
    expect(unknown.body.errors?.[0]).toMatchObject({
      message: expect.stringContaining('"nope"'),
      extensions: { code: 'BAD_USER_INPUT', field: 'slug' },
    });
    // Listing every page reads nothing; reading their feeds (a name they are not configured with
    // among them) is over the operation's budget.
    const listed = await harness.execute<{ statusPages: { slug: string }[] }>(
      '{ statusPages { slug tags } }',
    );
    expect(listed.body.errors).toBeUndefined();
    expect(listed.body.data?.statusPages.map((page) => page.slug)).toEqual(SLUGS);
    const many = await harness.execute('{ statusPages { slug name } }');
    expect(many.body.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      limit: 'MAX_PAGES_PER_OPERATION',
    });
    const tooMany = await harness.execute(
      'query ($s: [String!]) { statusPages(slugs: $s) { slug status { indicator } } }',
      {
        s: SLUGS.slice(0, 51),
      },
    );
    expect(tooMany.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(harness.simulator.requests).toEqual([]);
  });
});

describe('the default page of a STATUS_PAGES_FILE', () => {
  it('answers the page tree as STATUS_BASE_URL does, byte for byte', async () => {
    const bodyOf = async (harness: Harness) =>
      (
        await harness.fetch('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: PAGE_TREE_QUERY }),
        })
      ).text();
    const [fromFile, fromUrl] = await Promise.all([bodyOf(harness), bodyOf(viaUrl)]);
    // The fetch times differ by the milliseconds between the two gateways' reads.
    const withoutFetchTime = (text: string) => text.replace(/"fetchedAt":"[^"]+"/g, '');
    expect(withoutFetchTime(fromFile)).toBe(withoutFetchTime(fromUrl));
    expect(JSON.parse(fromFile).errors).toBeUndefined();
  });
});

describe('entities of many pages', () => {
  // Two pages of the same feed: the same component ids, told apart by their page alone.
  it('resolve a component by id on the page its representation names, by id alone on the default page', async () => {
    const [component] = ENTITY_PAGES.p150.summary.components;
    const [onDefault] = feed.summary.components;
    const id = component?.id ?? '';
    const { body } = await harness.execute<{
      _entities: ({ id: string; page: { slug: string } } | { slug: string; name: string } | null)[];
    }>(
      `query ($representations: [_Any!]!) {
        _entities(representations: $representations) {
          ... on Component { id page { slug } }
          ... on Page { slug name }
        }
      }`,
      {
        representations: [
          { __typename: 'Component', id, page: { slug: 'p150' } },
          { __typename: 'Component', id, page: { slug: 'p151' } },
          { __typename: 'Component', id, page: { slug: 'nobody' } },
          { __typename: 'Component', id: onDefault?.id },
          { __typename: 'Page', slug: 'p151' },
          { __typename: 'Page', slug: 'nobody' },
          { __typename: 'Component', id, page: 'p150' },
        ],
      },
    );
    // A page named other than as its key's `page { slug }` is refused at its own index.
    expect(body.errors?.map((error) => [error.path, error.message])).toEqual([
      [
        ['_entities', 6],
        'Representation 6 (Component) needs its key field "page.slug" as a non-empty string.',
      ],
    ]);
    expect(body.data?._entities).toEqual([
      { id, page: { slug: 'p150' } },
      { id, page: { slug: 'p151' } },
      null,
      { id: onDefault?.id, page: { slug: 'p000' } },
      { slug: 'p151', name: ENTITY_PAGES.p151.summary.page.name },
      null,
      null,
    ]);
  });
});

describe('the cost of many pages', () => {
  it('counts every page an operation reads against its MAX_RESOLVED_FIELDS', async () => {
    const query = 'query ($s: [String!]) { statusPages(slugs: $s) { components { id name } } }';
    const one = await harness.execute(query, { s: LARGE_PAGES.slice(0, 1) });
    expect(one.body.errors).toBeUndefined();
    const three = await harness.execute(query, { s: LARGE_PAGES });
    expect(three.body.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      limit: 'MAX_RESOLVED_FIELDS',
    });
  });
});
