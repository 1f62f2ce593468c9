import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSimulatedFeed,
  type SimulatedFeed,
} from '../../simulator/src/status-feed/fixture.js';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('lookups by id', () => {
  let harness: Harness;
  let feed: SimulatedFeed;

  beforeAll(async () => {
    feed = createSimulatedFeed({ now: new Date('2026-11-20T12:00:00Z') });
    harness = await startHarness({ simulator: { statusFeed: feed } });
  });
  afterAll(() => harness.close());

  it('finds a component with its group, siblings, incidents and maintenances', async () => {
    const child = feed.summary.components.find(
      (c) =>
        c.group_id !== null &&
        feed.summary.incidents.some((i) => i.components.some((ic) => ic.id === c.id)),
    );
    if (!child) throw new Error('the demo feed has an affected grouped component');
    const group = feed.summary.components.find((c) => c.id === child.group_id);

    const { body } = await harness.execute<{
      component: {
        id: string;
        name: string;
        isGroup: boolean;
        group: { id: string; isGroup: boolean; children: { id: string }[] };
        incidents: { id: string; components: { id: string }[] }[];
        maintenances: { id: string }[];
        createdAt: string;
      };
    }>(
      `query ($id: ID!) {
        component(id: $id) {
          id name isGroup createdAt
          group { id isGroup children { id } }
          incidents { id components { id } }
          maintenances { id }
        }
      }`,
      { id: child.id },
    );

    expect(body.errors).toBeUndefined();
    const component = body.data?.component;
    expect(component?.name).toBe(child.name);
    expect(component?.isGroup).toBe(false);
    expect(component?.createdAt).toBe(new Date(child.created_at).toISOString());
    expect(component?.group.id).toBe(group?.id);
    expect(component?.group.isGroup).toBe(true);
    expect(component?.group.children.map((c) => c.id)).toContain(child.id);
    const expectedIncidents = feed.summary.incidents.filter((i) =>
      i.components.some((c) => c.id === child.id),
    );
    expect(component?.incidents.map((i) => i.id)).toEqual(expectedIncidents.map((i) => i.id));
    expect(component?.incidents[0]?.components.map((c) => c.id)).toContain(child.id);
    const expectedMaintenances = feed.summary.scheduled_maintenances.filter((m) =>
      m.components.some((c) => c.id === child.id),
    );
    expect(component?.maintenances.map((m) => m.id)).toEqual(expectedMaintenances.map((m) => m.id));
  });

  it('answers null, not an error, for unknown ids', async () => {
    const { body } = await harness.execute(
      '{ component(id: "nope") { id } incident(id: "nope") { id } maintenance(id: "nope") { id } }',
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({ component: null, incident: null, maintenance: null });
  });

  it('finds an incident with its updates newest first', async () => {
    const wire = feed.summary.incidents[0];
    if (!wire) throw new Error('the demo feed has an incident');
    const { body } = await harness.execute<{
      incident: {
        name: string;
        status: string;
        impact: string;
        updates: { id: string; displayAt: string }[];
      };
    }>('query ($id: ID!) { incident(id: $id) { name status impact updates { id displayAt } } }', {
      id: wire.id,
    });
    expect(body.errors).toBeUndefined();
    expect(body.data?.incident.name).toBe(wire.name);
    expect(body.data?.incident.status).toBe(wire.status.toUpperCase());
    const times = body.data?.incident.updates.map((u) => Date.parse(u.displayAt)) ?? [];
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(times).toHaveLength(wire.incident_updates.length);
  });

  it('finds maintenances from the summary and those only listed as upcoming', async () => {
    const inSummary = feed.summary.scheduled_maintenances[0];
    const summaryIds = new Set(feed.summary.scheduled_maintenances.map((m) => m.id));
    const upcomingOnly = feed.upcoming.scheduled_maintenances.find((m) => !summaryIds.has(m.id));
    if (!inSummary || !upcomingOnly) throw new Error('the demo feed has both kinds');

    const { body } = await harness.execute<{
      a: { id: string; status: string; scheduledFor: string; components: { id: string }[] };
      b: { id: string; status: string; scheduledUntil: string };
    }>(
      `query ($a: ID!, $b: ID!) {
        a: maintenance(id: $a) { id status scheduledFor components { id } }
        b: maintenance(id: $b) { id status scheduledUntil }
      }`,
      { a: inSummary.id, b: upcomingOnly.id },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.a.id).toBe(inSummary.id);
    expect(body.data?.a.scheduledFor).toBe(new Date(inSummary.scheduled_for).toISOString());
    expect(body.data?.a.components.map((c) => c.id)).toEqual(inSummary.components.map((c) => c.id));
    expect(body.data?.b.id).toBe(upcomingOnly.id);
    expect(body.data?.b.status).toBe('SCHEDULED');
    expect(body.data?.b.scheduledUntil).toBe(new Date(upcomingOnly.scheduled_until).toISOString());
  });

  it('batches many lookups of one operation into one upstream request', async () => {
    harness.simulator.resetRequests();
    const ids = feed.summary.components.map((c) => c.id);
    const query = `{ ${ids.map((id, i) => `c${i}: component(id: "${id}") { id name group { id } }`).join('\n')} }`;
    const { body } = await harness.execute<Record<string, { id: string }>>(query);
    expect(body.errors).toBeUndefined();
    expect(Object.values(body.data ?? {}).map((c) => c.id)).toEqual(ids);
    expect(harness.simulator.requestCount()).toBeLessThanOrEqual(1);
  });
});
