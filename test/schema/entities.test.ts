import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { printSchemaDocument } from '../../src/schema/print.js';
import { type Harness, startHarness } from '../helpers/harness.js';

const ENTITIES = /* GraphQL */ `
  query ($representations: [_Any!]!) {
    _entities(representations: $representations) {
      __typename
      ... on Component { id name componentStatus: status group { name } }
      ... on Page { id name }
      ... on Incident { id name incidentStatus: status }
      ... on Maintenance { id name maintenanceStatus: status }
    }
  }
`;

type Entity = { __typename: string; id: string; name: string } | null;

describe('the federation subgraph', () => {
  let harness: Harness;
  beforeAll(async () => {
    // Every read fetches the summary again: a test counts the requests of its own operation.
    harness = await startHarness({ env: { STATUS_CACHE_TTL_MS: 0 } });
  });
  afterAll(() => harness.close());
  beforeEach(() => harness.simulator.resetRequests());

  it('serves its SDL at _service, the same as schema.graphql', async () => {
    const { body } = await harness.execute<{ _service: { sdl: string } }>('{ _service { sdl } }');
    expect(body.errors).toBeUndefined();
    const committed = await readFile(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(`${body.data?._service.sdl}\n`).toBe(printSchemaDocument());
    expect(committed).toBe(printSchemaDocument());
    expect(committed).toMatch(/type Component\s+@key\(fields: "id"\)/);
  });

  it('resolves 100 Component representations with one upstream request, null for unknown ids', async () => {
    const ids = harness.simulator.statusFeed.summary.components.map((c) => c.id);
    const representations = Array.from({ length: 100 }, (_, i) => ({
      __typename: 'Component',
      id: i % 10 === 9 ? `missing-${i}` : (ids[i % ids.length] ?? ''),
    }));

    const { body } = await harness.execute<{ _entities: Entity[] }>(ENTITIES, { representations });

    expect(body.errors).toBeUndefined();
    const entities = body.data?._entities ?? [];
    expect(entities).toHaveLength(100);
    entities.forEach((entity, i) => {
      const wanted = representations[i]?.id;
      if (wanted?.startsWith('missing-')) expect(entity).toBeNull();
      else expect(entity?.id).toBe(wanted);
    });
    expect(harness.simulator.requestCount('/status/api/v2/summary.json')).toBe(1);
    expect(harness.simulator.requestCount()).toBe(1);
  });

  it('resolves Page, Incident and Maintenance representations through the same loaders', async () => {
    const { summary, upcoming } = harness.simulator.statusFeed;
    const summaryIds = new Set(summary.scheduled_maintenances.map((m) => m.id));
    const upcomingOnly = upcoming.scheduled_maintenances.find((m) => !summaryIds.has(m.id));
    const representations = [
      { __typename: 'Page', id: summary.page.id },
      { __typename: 'Page', id: 'another-page' },
      { __typename: 'Incident', id: summary.incidents[0]?.id },
      { __typename: 'Incident', id: 'resolved-long-ago' },
      { __typename: 'Maintenance', id: summary.scheduled_maintenances[0]?.id },
      { __typename: 'Maintenance', id: upcomingOnly?.id },
    ];
    const { body } = await harness.execute<{ _entities: Entity[] }>(ENTITIES, { representations });
    expect(body.errors).toBeUndefined();
    expect(body.data?._entities.map((entity) => entity?.id ?? null)).toEqual([
      summary.page.id,
      null,
      summary.incidents[0]?.id,
      null,
      summary.scheduled_maintenances[0]?.id,
      upcomingOnly?.id,
    ]);
    expect(harness.simulator.requestCount('/status/api/v2/summary.json')).toBe(1);
  });
});
