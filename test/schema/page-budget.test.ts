import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../simulator/src/server.js';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';
import { subscribeSse, subscribeWs, wsClient } from '../helpers/subscriptions.js';

const NOW = new Date('2026-11-20T12:00:00Z');
/** A thousand configured pages, as an aggregator lists them. */
const SLUGS = Array.from({ length: 1_000 }, (_, i) => `p${String(i).padStart(4, '0')}`);
/** `count` slugs from the `start`th. */
const window = (start: number, count = 50) => SLUGS.slice(start, start + count);

/**
 * Pages mapped to a chain each: one more than an operation may read (MAX_PAGES_PER_OPERATION, 50),
 * none of them served (a chain field that read them would fail), no other test's.
 */
const CHAIN_PAGES = new Set(window(900, 51));

/** `slugs` at the simulator's pages of those slugs; each of `CHAIN_PAGES` with a chain of its own. */
const pagesFile = (simulator: Simulator, slugs: readonly string[]) =>
  statusPagesFile(
    slugs.map((slug, i) => ({
      slug,
      baseUrl: simulator.statusPageUrl(slug),
      ...(CHAIN_PAGES.has(slug) ? { chains: [{ chainId: 100_000 + i, components: ['x'] }] } : {}),
    })),
  );

/** The distinct pages the simulator was asked anything of. */
const pagesFetched = (simulator: Simulator) =>
  new Set(simulator.requests.map((request) => request.path.split('/')[2]));

/** `count` aliases of `field`, alias `a<i>` taking `$s<i>`. */
function aliased(count: number, field: (variable: string) => string): string {
  const variables = Array.from({ length: count }, (_, i) => `$s${i}: [String!]`).join(', ');
  const fields = Array.from({ length: count }, (_, i) => `a${i}: ${field(`$s${i}`)}`).join(' ');
  return `query (${variables}) { ${fields} }`;
}

const SWEEP = (variable: string) =>
  `statusPages(slugs: ${variable}) { slug components { id } upcomingMaintenances { id } incidentHistory { id } maintenanceHistory { id } }`;

const refusedForPages = (count: number) => ({
  message: expect.stringMatching(
    new RegExp(`^The operation reads ${count} status pages; the gateway reads at most 50 `),
  ),
  extensions: { code: 'BAD_USER_INPUT', limit: 'MAX_PAGES_PER_OPERATION' },
});

/** One gateway for the file: a thousand pages, fifty-one of them mapped to chains. */
let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({
    simulator: {
      statusPages: Object.fromEntries(
        [...window(0, 51), ...window(200), 'p0300'].map((slug) => [
          slug,
          createSimulatedFeed({ now: NOW }),
        ]),
      ),
    },
    env: (simulator) => ({
      STATUS_PAGES_FILE: pagesFile(simulator, SLUGS),
      // Fifty pages of one host, four requests at a time: on a loaded machine a request waits
      // longer than the harness's 1 s for its turn, and the page would be reported unavailable,
      // or left out of a list that waits the default 1 s for each page.
      UPSTREAM_TIMEOUT_MS: '15000',
      STATUS_OVERVIEW_DEADLINE_MS: '15000',
    }),
  });
});
afterAll(() => harness.close());
beforeEach(() => harness.simulator.resetRequests());

describe('the pages one operation reads', () => {
  it('are counted across aliases, and a sweep of a thousand is refused before any fetch', async () => {
    const { status, body } = await harness.execute(
      aliased(30, SWEEP),
      Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`s${i}`, window(i * 33)])),
    );
    expect(status).toBe(200);
    expect(body.data).toBeUndefined();
    expect(body.errors).toEqual([expect.objectContaining(refusedForPages(1_000))]);
    expect(harness.simulator.requests).toEqual([]);
  });

  it('count a page once however many fields read it', async () => {
    // Fifty pages no other test reads (the default page, p0000, is read by another).
    const { body } = await harness.execute<Record<string, { slug: string }[]>>(
      aliased(5, SWEEP),
      Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`s${i}`, window(1)])),
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.a4?.map((page) => page.slug)).toEqual(window(1));
    expect(pagesFetched(harness.simulator)).toEqual(new Set(window(1)));
    // Each page's four documents, once for the whole operation.
    expect(harness.simulator.requests).toHaveLength(50 * 4);
  });

  it('add up over every kind of field, fragments included, and not under @skip', async () => {
    const query = `query ($fifty: [String!], $other: String!, $more: [String!], $skip: Boolean!) {
      ...Fifty
      statusOverview(slugs: $more) @skip(if: $skip) { indicator }
      component(id: "x", slug: $other) { id }
    }
    fragment Fifty on Query { statusPages(slugs: $fifty) { slug status { indicator } } }`;
    const variables = { fifty: window(200), other: 'p0999', more: window(100, 10) };
    const mixed = await harness.execute(query, { ...variables, skip: false });
    expect(mixed.body.errors).toEqual([expect.objectContaining(refusedForPages(61))]);
    expect(harness.simulator.requests).toEqual([]);
    const skipped = await harness.execute(query, { ...variables, skip: true, other: 'p0249' });
    expect(skipped.body.errors).toBeUndefined();
    expect(pagesFetched(harness.simulator)).toEqual(new Set(window(200)));
  });

  it('count every page without slugs, the default one without a slug', async () => {
    const all = await harness.execute('{ statusOverview { indicator } }');
    expect(all.body.errors).toEqual([expect.objectContaining(refusedForPages(1_000))]);
    const one = await harness.execute<{ statusPage: { slug: string } }>('{ statusPage { slug } }');
    expect(one.body.errors).toBeUndefined();
    expect(one.body.data?.statusPage.slug).toBe('p0000');
  });

  it('count the pages _entities representations name', async () => {
    const query =
      'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Page { slug name } } }';
    const pages = (slugs: readonly string[]) => ({
      r: slugs.map((slug) => ({ __typename: 'Page', slug })),
    });
    const tooMany = await harness.execute(query, pages(window(0, 51)));
    expect(tooMany.body.errors).toEqual([expect.objectContaining(refusedForPages(51))]);
    // Components of one page and the page itself are one page.
    const components = await harness.execute(query, {
      r: [
        { __typename: 'Page', slug: 'p0300' },
        ...window(0, 60).map((_, i) => ({
          __typename: 'Component',
          id: `c${i}`,
          page: { slug: 'p0300' },
        })),
      ],
    });
    expect(components.body.errors).toBeUndefined();
    expect(harness.simulator.requests.map((request) => request.path)).toEqual([
      '/status/p0300/api/v2/summary.json',
    ]);
  });

  it('are refused the same way for a subscription, over SSE and over WebSocket', async () => {
    const query = 'subscription ($s: [String!]) { statusPageChanged(slugs: $s) { slug } }';
    const sse = await subscribeSse(harness.origin, query, { s: window(0, 51) });
    await sse.completed;
    expect(sse.events).toEqual([{ errors: [expect.objectContaining(refusedForPages(51))] }]);
    const client = wsClient(harness.origin);
    try {
      // graphql-ws sends a refusal as its `error` message.
      const ws = subscribeWs(client, query, { s: window(0, 51) });
      expect(await ws.error).toEqual([expect.objectContaining(refusedForPages(51))]);
      expect(ws.events).toEqual([]);
    } finally {
      await client.dispose();
    }
    expect(harness.simulator.requests).toEqual([]);
  });
});

describe('the pages chains are mapped to', () => {
  it('count against the budget when a chain field reads their feeds, and not otherwise', async () => {
    const status = await harness.execute('{ supportedChains { id status } }');
    expect(status.body.errors).toEqual([
      expect.objectContaining(refusedForPages(CHAIN_PAGES.size)),
    ]);
    expect(harness.simulator.requests).toEqual([]);
    const names = await harness.execute<{ supportedChains: { id: string }[] }>(
      '{ supportedChains { id name } }',
    );
    expect(names.body.errors).toBeUndefined();
    expect(names.body.data?.supportedChains.length).toBeGreaterThan(0);
  });
});
