import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';

const NOW = new Date('2026-11-20T12:00:00Z');

interface Node {
  id: string;
  createdAt: string;
  updatedAt: string;
  page: { slug: string };
}
interface IncidentsAnswer {
  incidents: {
    totalCount: number;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    edges: { cursor: string; node: Node }[];
  };
}

const INCIDENTS = `query ($slugs: [String!], $tags: [String!], $since: DateTime, $first: Int, $after: String) {
  incidents(slugs: $slugs, tags: $tags, since: $since, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { cursor node { id createdAt updatedAt page { slug } } }
  }
}`;

describe('incidents across pages', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      simulator: {
        statusPages: {
          alpha: createSimulatedFeed({ now: NOW, incidents: 3 }),
          beta: createSimulatedFeed({ now: NOW, incidents: 2 }),
        },
      },
      env: (simulator) => ({
        STATUS_PAGES_FILE: statusPagesFile([
          { slug: 'ledger', baseUrl: simulator.statusBaseUrl, tags: ['network'] },
          { slug: 'alpha', baseUrl: simulator.statusPageUrl('alpha'), tags: ['vendor'] },
          { slug: 'beta', baseUrl: simulator.statusPageUrl('beta'), tags: ['vendor'] },
        ]),
      }),
    });
  });
  afterAll(() => harness.close());

  const incidents = async (variables: Record<string, unknown>) => {
    const { body } = await harness.execute<IncidentsAnswer>(INCIDENTS, variables);
    expect(body.errors).toBeUndefined();
    if (!body.data) throw new Error('no incidents');
    return body.data.incidents;
  };

  /** Every node, walking `first` at a time. */
  async function walk(variables: Record<string, unknown>) {
    const nodes: Node[] = [];
    let slice = await incidents(variables);
    for (;;) {
      nodes.push(...slice.edges.map((edge) => edge.node));
      if (!slice.pageInfo.hasNextPage) return nodes;
      slice = await incidents({ ...variables, after: slice.pageInfo.endCursor });
    }
  }

  it('lists every page incident once, newest first, and walks them in slices', async () => {
    const all = await incidents({ first: 100 });
    const nodes = all.edges.map((edge) => edge.node);
    expect(all.totalCount).toBe(nodes.length);
    expect(new Set(nodes.map((node) => node.page.slug))).toEqual(
      new Set(['ledger', 'alpha', 'beta']),
    );
    const keys = nodes.map((node) => `${node.page.slug}/${node.id}`);
    expect(new Set(keys).size).toBe(keys.length);
    const created = nodes.map((node) => Date.parse(node.createdAt));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect(await walk({ first: 2 })).toEqual(nodes);
  });

  it('takes the pages by slug or tag, and incidents since a time', async () => {
    const vendors = await walk({ tags: ['vendor'] });
    expect(new Set(vendors.map((node) => node.page.slug))).toEqual(new Set(['alpha', 'beta']));
    const all = (await incidents({ first: 100 })).edges.map((edge) => edge.node);
    const middle = all[Math.floor(all.length / 2)];
    if (!middle) throw new Error('no incidents to cut');
    const recent = await walk({ since: middle.createdAt });
    expect(recent).toEqual(all.filter((node) => node.createdAt >= middle.createdAt));
    const bad = await harness.execute(INCIDENTS, { after: 'not-a-cursor' });
    expect(bad.body.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'after',
    });
  });
});
