import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSimulatedFeed,
  type SimulatedFeed,
} from '../../simulator/src/status-feed/fixture.js';
import { PAGE_TREE_QUERY } from '../../src/http/page-tree-query.js';
import { type Harness, startHarness } from '../helpers/harness.js';

interface TreeComponent {
  id: string;
  name: string;
  status: string;
  isGroup: boolean;
  children: TreeComponent[];
}
interface TreeEvent {
  id: string;
  name: string;
  status: string;
  impact: string;
  components: { id: string; name: string; group: { name: string } | null }[];
  updates?: { status: string; body: string; displayAt: string }[];
}
interface PageTree {
  statusPage: {
    name: string;
    url: string;
    fetchedAt: string;
    status: { indicator: string; description: string };
    components: TreeComponent[];
    incidents: TreeEvent[];
    scheduledMaintenances: TreeEvent[];
    upcomingMaintenances: TreeEvent[];
  };
}

describe('Query.statusPage', () => {
  let harness: Harness;
  let feed: SimulatedFeed;

  beforeAll(async () => {
    feed = createSimulatedFeed({ now: new Date('2026-11-20T12:00:00Z') });
    harness = await startHarness({ simulator: { statusFeed: feed } });
  });
  afterAll(() => harness.close());

  it('answers the whole page tree in one round trip, one upstream request per endpoint', async () => {
    harness.simulator.resetRequests();
    const { status, body } = await harness.execute<PageTree>(PAGE_TREE_QUERY);

    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    const page = body.data?.statusPage;
    if (!page) throw new Error('no page');

    expect(page.name).toBe(feed.summary.page.name);
    expect(page.url).toBe(feed.summary.page.url);
    expect(page.status.indicator).toBe(feed.summary.status.indicator.toUpperCase());
    expect(page.status.description).toBe(feed.summary.status.description);
    expect(Date.now() - Date.parse(page.fetchedAt)).toBeLessThan(60_000);

    const wireComponents = feed.summary.components;
    const wireTopLevel = wireComponents
      .filter((c) => c.group_id === null)
      .sort((a, b) => a.position - b.position);
    expect(page.components.map((c) => c.id)).toEqual(wireTopLevel.map((c) => c.id));
    for (const top of page.components) {
      const wireChildren = wireComponents
        .filter((c) => c.group_id === top.id)
        .sort((a, b) => a.position - b.position);
      expect(top.children.map((c) => c.id)).toEqual(wireChildren.map((c) => c.id));
      expect(top.isGroup).toBe(wireChildren.length > 0);
      for (const child of top.children) {
        const wire = wireComponents.find((c) => c.id === child.id);
        expect(child.status).toBe(wire?.status.toUpperCase());
      }
    }

    expect(page.incidents.map((i) => i.id)).toEqual(feed.summary.incidents.map((i) => i.id));
    const incident = page.incidents[0];
    const wireIncident = feed.summary.incidents[0];
    if (!incident || !wireIncident) throw new Error('the demo feed has an incident');
    const newestFirst = [...wireIncident.incident_updates].sort(
      (a, b) => Date.parse(b.display_at) - Date.parse(a.display_at),
    );
    expect(incident.updates?.map((u) => u.body)).toEqual(newestFirst.map((u) => u.body));
    expect(incident.updates?.length).toBeGreaterThan(1);
    for (const component of incident.components) {
      const wire = wireComponents.find((c) => c.id === component.id);
      const wireGroup = wireComponents.find((c) => c.id === wire?.group_id);
      expect(component.group?.name ?? null).toBe(wireGroup?.name ?? null);
    }

    expect(page.scheduledMaintenances.map((m) => m.id)).toEqual(
      feed.summary.scheduled_maintenances.map((m) => m.id),
    );
    expect(page.scheduledMaintenances.map((m) => m.status)).toContain('IN_PROGRESS');
    expect(page.upcomingMaintenances.map((m) => m.id)).toEqual(
      feed.upcoming.scheduled_maintenances.map((m) => m.id),
    );

    expect(harness.simulator.requestCount('/status/api/v2/summary.json')).toBeLessThanOrEqual(1);
    expect(
      harness.simulator.requestCount('/status/api/v2/scheduled-maintenances/upcoming.json'),
    ).toBeLessThanOrEqual(1);
  });

  it('filters components by status, over the whole tree or the top level only', async () => {
    const degraded = feed.summary.components.filter((c) => c.status !== 'operational');
    const { body } = await harness.execute<{
      statusPage: {
        all: { id: string }[];
        notOk: { id: string; status: string }[];
        top: { id: string }[];
      };
    }>(`{
      statusPage {
        all: components { id }
        notOk: components(status: [DEGRADED_PERFORMANCE, PARTIAL_OUTAGE, MAJOR_OUTAGE]) { id status }
        top: components(topLevel: true, status: [OPERATIONAL]) { id }
      }
    }`);
    expect(body.errors).toBeUndefined();
    expect(body.data?.statusPage.all).toHaveLength(feed.summary.components.length);
    expect(body.data?.statusPage.notOk.map((c) => c.id).sort()).toEqual(
      degraded
        .filter((c) => c.status !== 'under_maintenance')
        .map((c) => c.id)
        .sort(),
    );
    const topOperational = feed.summary.components.filter(
      (c) => c.group_id === null && c.status === 'operational',
    );
    expect(body.data?.statusPage.top.map((c) => c.id).sort()).toEqual(
      topOperational.map((c) => c.id).sort(),
    );
  });

  it('orders the full component list by position', async () => {
    const { body } = await harness.execute<{ statusPage: { components: { position: number }[] } }>(
      '{ statusPage { components { position } } }',
    );
    const positions = body.data?.statusPage.components.map((c) => c.position) ?? [];
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });
});
