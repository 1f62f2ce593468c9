import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../simulator/src/server.js';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';

const NOW = new Date('2026-11-20T12:00:00Z');
const TTL_MS = 50;
/**
 * The pages the test of a page that does not answer reads (tagged `deadline` too): `alive`
 * answers, `seen` answers once and then hangs, `silent` never answers.
 */
const DEADLINE_PAGES = ['alive', 'seen', 'silent'] as const;
/**
 * A thousand configured pages, as an aggregator lists them: every tenth tagged `chain`; the last
 * three are the deadline test's.
 */
const SLUGS = [
  ...Array.from(
    { length: 1_000 - DEADLINE_PAGES.length },
    (_, i) => `p${String(i).padStart(4, '0')}`,
  ),
  ...DEADLINE_PAGES,
];
const CHAIN_PAGES = SLUGS.filter((_, i) => i % 10 === 0);

const pagesFile = (simulator: Simulator) =>
  statusPagesFile(
    SLUGS.map((slug, i) => ({
      slug,
      baseUrl: simulator.statusPageUrl(slug),
      name: i === 7 ? 'Payments Cloud' : undefined,
      tags: [
        ...(i % 10 === 0 ? ['chain', 'watched'] : ['vendor']),
        ...(DEADLINE_PAGES.some((page) => page === slug) ? ['deadline'] : []),
      ],
    })),
  );

interface PagesAnswer {
  pages: {
    totalCount: number;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    edges: { cursor: string; node: { slug: string; tags: string[] } }[];
  };
}

const PAGES = `query ($first: Int, $after: String, $tags: [String!], $search: String) {
  pages(first: $first, after: $after, tags: $tags, search: $search) {
    totalCount pageInfo { hasNextPage endCursor } edges { cursor node { slug tags } }
  }
}`;

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness({
    simulator: {
      statusPages: Object.fromEntries(
        [...SLUGS.slice(0, 3), ...DEADLINE_PAGES].map((slug) => [
          slug,
          createSimulatedFeed({ now: NOW }),
        ]),
      ),
    },
    env: (simulator) => ({
      STATUS_PAGES_FILE: pagesFile(simulator),
      // Far longer than the deadline: what a client waits for must be the deadline alone.
      STATUS_TIMEOUT_MS: 20_000,
      STATUS_OVERVIEW_DEADLINE_MS: 300,
      STATUS_CACHE_TTL_MS: TTL_MS,
    }),
  });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.simulator.clearFaults();
  harness.simulator.resetRequests();
});

describe('a thousand configured pages', () => {
  /** One slice of `pages`. */
  async function slice(variables: Record<string, unknown>): Promise<PagesAnswer['pages']> {
    const { body } = await harness.execute<PagesAnswer>(PAGES, variables);
    expect(body.errors).toBeUndefined();
    if (!body.data) throw new Error('no pages');
    return body.data.pages;
  }

  /** Every slug `pages` lists, walking it `first` at a time, and how many slices it took. */
  async function walk(variables: Record<string, unknown>) {
    const slugs: string[] = [];
    const totals = new Set<number>();
    let connection = await slice(variables);
    let pages = 1;
    for (;;) {
      slugs.push(...connection.edges.map((edge) => edge.node.slug));
      totals.add(connection.totalCount);
      const { hasNextPage, endCursor } = connection.pageInfo;
      if (!hasNextPage) break;
      connection = await slice({ ...variables, after: endCursor });
      pages += 1;
    }
    return { slugs, totals, pages };
  }

  it('walks them all a hundred at a time, in configuration order, reading no feed', async () => {
    harness.simulator.resetRequests();
    const all = await walk({ first: 100 });
    expect(all.slugs).toEqual(SLUGS);
    expect(all.totals).toEqual(new Set([1_000]));
    expect(all.pages).toBe(10);
    expect(harness.simulator.requests).toEqual([]);
  });

  it('names each unknown slug once, the first five, with how many more', async () => {
    const slugs = [...Array.from({ length: 500 }, () => 'nope'), 'a', 'b', 'c', 'd', 'e', 'f'];
    const { body } = await harness.execute(
      'query ($slugs: [String!]) { statusOverview(slugs: $slugs) { complete } }',
      { slugs },
    );
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'slugs' });
    expect(body.errors?.[0]?.message).toBe(
      'No status page has the slug "nope", "a", "b", "c", "d" and 2 more: `pages` lists the configured ones.',
    );
  });

  it('lists the pages of a tag, and those a search finds', async () => {
    const tagged = await walk({ first: 30, tags: ['chain'] });
    expect(tagged.slugs).toEqual(CHAIN_PAGES);
    expect(tagged.totals).toEqual(new Set([100]));
    const { body } = await harness.execute<PagesAnswer>(PAGES, { search: 'PAYMENTS' });
    expect(body.data?.pages.edges.map((edge) => edge.node)).toEqual([
      { slug: 'p0007', tags: ['vendor'] },
    ]);
    expect(body.data?.pages.totalCount).toBe(1);
  });

  it('refuses a slice it cannot give, and counts what is read of the pages', async () => {
    const tooMany = await harness.execute(PAGES, { first: 101 });
    expect(tooMany.body.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'first',
    });
    const lost = await harness.execute(PAGES, { after: 'bm90LWEtY3Vyc29y' });
    expect(lost.body.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'after',
    });
    harness.simulator.resetRequests();
    const statuses = await harness.execute(
      '{ pages(first: 100) { edges { node { slug status { indicator } } } } }',
    );
    expect(statuses.body.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      limit: 'MAX_PAGES_PER_OPERATION',
    });
    expect(harness.simulator.requests).toEqual([]);
  });

  it('gives each page its tags, and takes tags beside slugs in lists and overviews', async () => {
    const { body } = await harness.execute<{
      statusPages: { slug: string; tags: string[] }[];
      statusOverview: { pages: { slug: string }[] };
    }>(
      `{ statusPages(slugs: ["p0001"], tags: ["watched"]) { slug tags }
         statusOverview(slugs: ["p0001", "p0002"]) { pages { slug } } }`,
    );
    expect(body.data?.statusPages.map((page) => page.slug)).toEqual(
      [...CHAIN_PAGES, 'p0001'].sort(),
    );
    expect(body.data?.statusPages[1]).toEqual({ slug: 'p0001', tags: ['vendor'] });
    expect(body.data?.statusOverview.pages.map((page) => page.slug)).toEqual(['p0001', 'p0002']);
    const unknown = await harness.execute('{ statusPages(tags: ["nope"]) { slug } }');
    expect(unknown.body.errors?.[0]).toMatchObject({
      message: expect.stringContaining('"nope"'),
      extensions: { code: 'BAD_USER_INPUT', field: 'tags' },
    });
    const overBudget = await harness.execute(
      '{ statusOverview(tags: ["chain", "vendor"]) { indicator } }',
    );
    expect(overBudget.body.errors?.[0]?.extensions).toMatchObject({
      limit: 'MAX_PAGES_PER_OPERATION',
    });
  });
});

describe('a page that does not answer', () => {
  it('leaves an overview incomplete, with its last known state or none, never held up', async () => {
    // `seen` answers once, then both it and `silent` hang.
    const first = await harness.execute('{ statusPage(slug: "seen") { name } }');
    expect(first.body.errors).toBeUndefined();
    harness.simulator.setFault('status', '/seen/api/v2/summary.json', { kind: 'hang' });
    harness.simulator.setFault('status', '/silent/api/v2/summary.json', { kind: 'hang' });
    try {
      // Past its TTL `seen` is served at once while it is refetched; once that refetch has not
      // answered within the deadline, the page is unreachable.
      type Overview = {
        statusOverview: {
          complete: boolean;
          pages: { slug: string; reachable: boolean; stale: boolean; lastSeenAt: string | null }[];
          unreachablePages: {
            slug: string;
            name: string;
            reachable: boolean;
            lastSeenAt: string | null;
          }[];
        };
      };
      const { body } = await eventually(async () => {
        const answer = await harness.execute<Overview>(
          `{ statusOverview(tags: ["deadline"]) {
              complete
              pages { slug reachable stale lastSeenAt }
              unreachablePages { slug name reachable lastSeenAt }
          } }`,
        );
        const seen = answer.body.data?.statusOverview.pages.find((page) => page.slug === 'seen');
        return seen?.reachable === false && answer;
      });
      const overview = body.data?.statusOverview;
      expect(overview?.complete).toBe(false);
      expect(overview?.pages.map((page) => [page.slug, page.reachable, page.stale])).toEqual([
        ['alive', true, false],
        ['seen', false, true],
      ]);
      expect(overview?.pages[1]?.lastSeenAt).toEqual(expect.any(String));
      expect(overview?.unreachablePages).toEqual([
        {
          slug: 'seen',
          name: expect.any(String),
          reachable: false,
          lastSeenAt: expect.any(String),
        },
        { slug: 'silent', name: 'silent', reachable: false, lastSeenAt: null },
      ]);
      // The one never seen is named beside the data, as having missed the deadline.
      expect(body.errors).toEqual([
        expect.objectContaining({
          message: expect.stringContaining('no answer within 300 ms'),
          extensions: expect.objectContaining({ code: 'UPSTREAM_UNAVAILABLE', slug: 'silent' }),
        }),
      ]);
      // In a list, a page never seen is a null node with its error; the others answer.
      const listed = await harness.execute<{
        pages: { edges: { node: { slug: string; reachable: boolean } | null }[] };
      }>('{ pages(tags: ["deadline"]) { edges { node { slug reachable } } } }');
      expect(listed.body.data?.pages.edges.map((edge) => edge.node)).toEqual([
        { slug: 'alive', reachable: true },
        { slug: 'seen', reachable: false },
        { slug: 'silent', reachable: false },
      ]);
      const statuses = await harness.execute<{
        pages: { edges: { node: { slug: string } | null }[] };
      }>('{ pages(tags: ["deadline"]) { edges { node { slug status { indicator } } } } }');
      expect(statuses.body.data?.pages.edges.map((edge) => edge.node?.slug ?? null)).toEqual([
        'alive',
        'seen',
        null,
      ]);
      expect(statuses.body.errors).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(
            /^The status feed of page silent .* no answer within 300 ms/,
          ),
          path: ['pages', 'edges', 2, 'node', 'status'],
        }),
      ]);
    } finally {
      harness.simulator.clearFaults();
      // The reads past the TTL refetch `alive` in the background: let that end here, not in
      // another test's count of requests. A read served a snapshot younger than the TTL started
      // none, and none was under way.
      await eventually(async () => {
        const { body } = await harness.execute<{ statusPage: { fetchedAt: string } }>(
          '{ statusPage(slug: "alive") { fetchedAt } }',
        );
        return Date.now() - Date.parse(body.data?.statusPage.fetchedAt ?? '') < TTL_MS;
      });
    }
  });
});
