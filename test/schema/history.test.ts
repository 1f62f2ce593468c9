import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';

/** The page the reads read: a page of its own, so that its documents' caching reaches no other test. */
const HISTORY = 'history';
/** The page whose requests are counted, read by that test alone. */
const COUNTED = 'counted';
const INCIDENT_HISTORY = `/status/${COUNTED}/api/v2/incidents.json`;
const MAINTENANCE_HISTORY = `/status/${COUNTED}/api/v2/scheduled-maintenances.json`;

interface Event {
  id: string;
  name: string;
  status: string;
  resolvedAt: string | null;
  components: { id: string; group: { id: string } | null }[];
}

/*
 * One gateway for the file. The default page (the simulator's one feed, slug `default`: named as
 * a gateway of one page names it) is read by the test of a missing history document alone, which
 * needs its first read; the others read pages of their own, each made as that feed is.
 */
let harness: Harness;
const history = createSimulatedFeed();
beforeAll(async () => {
  harness = await startHarness({
    simulator: { statusPages: { [HISTORY]: history, [COUNTED]: createSimulatedFeed() } },
    env: (simulator) => ({
      STATUS_PAGES_FILE: statusPagesFile([
        { slug: 'default', baseUrl: simulator.statusBaseUrl },
        { slug: HISTORY, baseUrl: simulator.statusPageUrl(HISTORY) },
        { slug: COUNTED, baseUrl: simulator.statusPageUrl(COUNTED) },
      ]),
    }),
  });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.simulator.clearFaults();
  harness.simulator.resetRequests();
});

describe('page history: incidents.json and scheduled-maintenances.json', () => {
  it('lists resolved incidents and completed maintenances, newest first, linked into the tree', async () => {
    const { incidentHistory, maintenanceHistory } = history;
    const { body } = await harness.execute<{
      statusPage: { incidentHistory: Event[]; maintenanceHistory: Event[] };
    }>(`{
      statusPage(slug: "${HISTORY}") {
        incidentHistory { id name status resolvedAt components { id group { id } } }
        maintenanceHistory { id name status resolvedAt components { id group { id } } }
      }
    }`);
    expect(body.errors).toBeUndefined();
    const page = body.data?.statusPage;
    expect(page?.incidentHistory.map((i) => i.id)).toEqual(
      incidentHistory?.incidents.map((i) => i.id),
    );
    expect(page?.maintenanceHistory.map((m) => m.id)).toEqual(
      maintenanceHistory?.scheduled_maintenances.map((m) => m.id),
    );
    const resolved = page?.incidentHistory.find((i) => i.status === 'RESOLVED');
    expect(resolved?.resolvedAt).not.toBeNull();
    expect(page?.maintenanceHistory.some((m) => m.status === 'COMPLETED')).toBe(true);
    // The history's components are the nodes of the summary's tree: their group resolves.
    expect(resolved?.components[0]?.group?.id).toBeTruthy();
  });

  it('gives each component its own history, and finds a resolved incident by id', async () => {
    const resolved = history.incidentHistory?.incidents.find(
      (incident) => incident.status === 'resolved',
    );
    const componentId = resolved?.components[0]?.id ?? '';
    const { body } = await harness.execute<{
      component: { incidents: { id: string }[]; incidentHistory: { id: string }[] };
      incident: { id: string; status: string };
    }>(
      `query ($component: ID!, $incident: ID!, $slug: String) {
        component(id: $component, slug: $slug) { incidents { id } incidentHistory { id } }
        incident(id: $incident, slug: $slug) { id status }
      }`,
      { component: componentId, incident: resolved?.id, slug: HISTORY },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.component.incidents.map((i) => i.id)).not.toContain(resolved?.id);
    expect(body.data?.component.incidentHistory.map((i) => i.id)).toContain(resolved?.id);
    expect(body.data?.incident).toEqual({ id: resolved?.id, status: 'RESOLVED' });
  });
});

describe('page history requests', () => {
  it('costs one upstream request per document per TTL, however many fields read it', async () => {
    const query = `{
      statusPage(slug: "${COUNTED}") { incidentHistory { id } components { incidentHistory { id } maintenanceHistory { id } } }
    }`;
    await Promise.all([
      harness.execute(query),
      harness.execute(`{ statusPage(slug: "${COUNTED}") { maintenanceHistory { id } } }`),
    ]);
    await harness.execute(query);
    expect(harness.simulator.requestCount(INCIDENT_HISTORY)).toBe(1);
    expect(harness.simulator.requestCount(MAINTENANCE_HISTORY)).toBe(1);
  });

  it('answers the rest of the page when the feed lacks a history document, with an error on that field only', async () => {
    harness.simulator.setFault('status', '/incidents.json', { kind: 'status', status: 404 });
    const componentId = harness.simulator.statusFeed.summary.components[0]?.id;
    const { body } = await harness.execute<{
      statusPage: { name: string; incidentHistory: null; maintenanceHistory: unknown[] };
      component: { name: string; incidentHistory: null };
    }>(
      `query ($id: ID!) {
        statusPage { name incidentHistory { id } maintenanceHistory { id } }
        component(id: $id) { name incidentHistory { id } }
      }`,
      { id: componentId },
    );
    expect(body.data?.statusPage.name).toBeTruthy();
    expect(body.data?.statusPage.incidentHistory).toBeNull();
    expect(body.data?.statusPage.maintenanceHistory.length).toBeGreaterThan(0);
    expect(body.data?.component).toEqual({ name: expect.any(String), incidentHistory: null });
    expect(body.errors?.map((error) => error.path)).toEqual([
      ['statusPage', 'incidentHistory'],
      ['component', 'incidentHistory'],
    ]);
    expect(body.errors?.[0]?.message).toBe(
      'The status feed GET /incidents.json is unavailable: it answered HTTP 404',
    );
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');

    // A lookup by id that only the missing document could answer says so, rather than null.
    const lookup = await harness.execute('{ incident(id: "not-in-the-summary") { id } }');
    expect(lookup.body.errors?.[0]?.path).toEqual(['incident']);
    // The missing document is asked for once per TTL, not on every request.
    expect(harness.simulator.requestCount('/status/api/v2/incidents.json')).toBe(1);
  });
});
