import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  postIncidentUpdate,
  postMaintenanceUpdate,
} from '../../simulator/src/status-feed/status-events.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import type { StatuspageComponentStatus } from '../../simulator/src/status-feed/types.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import {
  polledOnce,
  type Received,
  STATUS_DOCUMENTS,
  subscribeSse,
} from '../helpers/subscriptions.js';

const TTL_MS = 150;

const COMPONENT_CHANGES = /* GraphQL */ `
  subscription Changes($ids: [ID!]) {
    componentStatusChanged(ids: $ids) {
      component { id name status group { id } }
      previousStatus
      status
      detectedAt
    }
  }
`;

interface ComponentChange {
  componentStatusChanged: {
    component: { id: string; name: string; status: string; group: { id: string } | null };
    previousStatus: string;
    status: string;
    detectedAt: string;
  };
}

let harness: Harness;
const open: Received<unknown>[] = [];

beforeAll(async () => {
  harness = await startHarness({
    env: { STATUS_CACHE_TTL_MS: TTL_MS, CIRCUIT_COOLDOWN_MS: 50 },
    logLevel: 'silent',
  });
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((subscription) => subscription.close()));
});
afterAll(async () => {
  await harness?.close();
});

async function subscribe<Data>(
  query: string,
  variables?: Record<string, unknown>,
  method?: 'GET' | 'POST',
) {
  const subscription = await subscribeSse<Data>(
    harness.origin,
    query,
    variables,
    method ? { method } : {},
  );
  open.push(subscription);
  return subscription;
}

function leaf(group: string, name: string) {
  const { components } = harness.simulator.statusFeed.summary;
  const parent = components.find((c) => c.group && c.name === group);
  const found = components.find((c) => c.group_id === parent?.id && c.name === name);
  if (!found || !parent) throw new Error(`no ${group} › ${name}`);
  return { id: found.id, groupId: parent.id, status: found.status };
}

const setStatus = (id: string, status: StatuspageComponentStatus) =>
  harness.simulator.updateStatusFeed((feed) => setComponentStatuses(feed, { [id]: status }));

/** Lets the poller see the feed as it is now, so that later changes are measured against it. */
const settle = (paths?: readonly string[]) => polledOnce(harness.simulator, paths);

describe('componentStatusChanged over SSE', () => {
  it('delivers a component change made in the simulator, with its group rolled up', async () => {
    const relay = leaf('Mainnet', 'JSON-RPC Relay');
    const changes = await subscribe<ComponentChange>(COMPONENT_CHANGES);
    expect(changes.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await settle();
    setStatus(relay.id, 'major_outage');

    const first = await changes.next();
    const second = await changes.next();
    const byId = new Map(
      [first, second].map((event) => [
        event.data?.componentStatusChanged.component.id,
        event.data?.componentStatusChanged,
      ]),
    );
    expect(byId.get(relay.id)).toMatchObject({
      component: { name: 'JSON-RPC Relay', status: 'MAJOR_OUTAGE', group: { id: relay.groupId } },
      previousStatus: 'OPERATIONAL',
      status: 'MAJOR_OUTAGE',
    });
    expect(byId.get(relay.groupId)).toMatchObject({
      status: 'MAJOR_OUTAGE',
      component: { group: null },
    });
    setStatus(relay.id, 'operational');
    await changes.next();
    await changes.next();
  });

  it("filters by ids, a group's id covering its children", async () => {
    const inGroup = leaf('Testnet', 'Mirror Node gRPC API');
    const elsewhere = leaf('Previewnet', 'Network Explorer');
    const byGroup = await subscribe<ComponentChange>(COMPONENT_CHANGES, { ids: [inGroup.groupId] });
    const byLeaf = await subscribe<ComponentChange>(COMPONENT_CHANGES, { ids: [elsewhere.id] });
    await settle();
    setStatus(elsewhere.id, 'degraded_performance');
    setStatus(inGroup.id, 'partial_outage');

    const fromLeaf = await byLeaf.next();
    expect(fromLeaf.data?.componentStatusChanged.component.id).toBe(elsewhere.id);
    const seenByGroup = [await byGroup.next(), await byGroup.next()].map(
      (event) => event.data?.componentStatusChanged.component.id,
    );
    expect(seenByGroup.sort()).toEqual([inGroup.id, inGroup.groupId].sort());
    await settle();
    expect(byLeaf.events).toHaveLength(1);
    expect(byGroup.events).toHaveLength(2);
    setStatus(elsewhere.id, 'operational');
    setStatus(inGroup.id, 'operational');
    await settle();
  });

  it('refuses bad ids with BAD_USER_INPUT before subscribing', async () => {
    const tooMany = await subscribe(COMPONENT_CHANGES, {
      ids: Array.from({ length: 501 }, (_, i) => `c${i}`),
    });
    expect((await tooMany.next()).errors?.[0]).toMatchObject({
      message: expect.stringMatching(/at most 500/),
      extensions: { code: 'BAD_USER_INPUT', field: 'ids' },
    });
    const unknown = await subscribe(COMPONENT_CHANGES, { ids: ['nope'] });
    expect((await unknown.next()).errors?.[0]).toMatchObject({
      message: expect.stringMatching(/no component "nope"/),
      extensions: { code: 'BAD_USER_INPUT' },
    });
    const long = await subscribe(COMPONENT_CHANGES, { ids: ['x'.repeat(100)] });
    expect((await long.next()).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    await Promise.all([tooMany.completed, unknown.completed, long.completed]);
  });

  it('sends every change once, none lost or repeated, across many refreshes', async () => {
    const explorer = leaf('Mainnet', 'Network Explorer');
    const changes = await subscribe<ComponentChange>(COMPONENT_CHANGES, { ids: [explorer.id] });
    await settle();
    const sequence: StatuspageComponentStatus[] = [
      'degraded_performance',
      'partial_outage',
      'major_outage',
      'partial_outage',
      'operational',
    ];
    for (const status of sequence) {
      setStatus(explorer.id, status);
      await settle();
    }
    const seen = changes.events.map((event) => [
      event.data?.componentStatusChanged.previousStatus,
      event.data?.componentStatusChanged.status,
    ]);
    const upper = (status: string) => status.toUpperCase();
    expect(seen).toEqual(
      sequence.map((status, i) => [
        upper(i === 0 ? 'operational' : (sequence[i - 1] ?? '')),
        upper(status),
      ]),
    );
  });

  it('sends nothing while the feed fails or serves a stale copy, nor when it recovers unchanged', async () => {
    const changes = await subscribe<ComponentChange>(COMPONENT_CHANGES);
    await settle();
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    await settle();
    await settle();
    harness.simulator.clearFaults();
    await settle();
    expect(changes.events).toEqual([]);
  });
});

describe('statusPageChanged over SSE', () => {
  const PAGE = /* GraphQL */ `
    subscription { statusPageChanged { status { indicator } components(topLevel: true) { id status } } }
  `;
  interface Page {
    statusPageChanged: {
      status: { indicator: string };
      components: { id: string; status: string }[];
    };
  }

  it('sends the whole page on subscribe and again when something on it changes, also over GET (EventSource)', async () => {
    const portal = harness.simulator.statusFeed.summary.components.find(
      (c) => c.name === 'Developer Portal',
    );
    if (!portal) throw new Error('no Developer Portal');
    for (const method of ['POST', 'GET'] as const) {
      const pages = await subscribe<Page>(PAGE, undefined, method);
      const initial = await pages.next();
      expect(
        initial.data?.statusPageChanged.components.find((c) => c.id === portal.id)?.status,
      ).toBe('OPERATIONAL');
      await settle();
      expect(pages.events).toHaveLength(1);
      setStatus(portal.id, 'major_outage');
      const changed = await pages.next();
      expect(
        changed.data?.statusPageChanged.components.find((c) => c.id === portal.id)?.status,
      ).toBe('MAJOR_OUTAGE');
      setStatus(portal.id, 'operational');
      const back = await pages.next();
      expect(back.data?.statusPageChanged.components.find((c) => c.id === portal.id)?.status).toBe(
        'OPERATIONAL',
      );
      await pages.close();
    }
  });
});

describe('incidentChanged and maintenanceChanged over SSE', () => {
  const INCIDENTS = /* GraphQL */ `
    subscription { incidentChanged { kind detectedAt incident { id name status resolvedAt components { id status } updates { status body } } } }
  `;
  const MAINTENANCES = /* GraphQL */ `
    subscription { maintenanceChanged { kind maintenance { id name status resolvedAt components { id status } } } }
  `;
  // What the poller reads for each (see status-event-change.ts).
  const INCIDENT_DOCUMENTS = [STATUS_DOCUMENTS.summary, STATUS_DOCUMENTS.incidentHistory];
  const MAINTENANCE_DOCUMENTS = [
    STATUS_DOCUMENTS.summary,
    STATUS_DOCUMENTS.upcoming,
    STATUS_DOCUMENTS.maintenanceHistory,
  ];
  interface IncidentEvent {
    incidentChanged: {
      kind: string;
      incident: {
        id: string;
        status: string;
        resolvedAt: string | null;
        updates: { status: string }[];
      };
    };
  }
  interface MaintenanceEvent {
    maintenanceChanged: {
      kind: string;
      maintenance: { id: string; status: string; resolvedAt: string | null };
    };
  }

  it('follows an incident from CREATED through UPDATED to RESOLVED, confirmed by incidents.json', async () => {
    const relay = leaf('Testnet', 'JSON-RPC Relay');
    const incidents = await subscribe<IncidentEvent>(INCIDENTS);
    await settle(INCIDENT_DOCUMENTS);
    let id = '';
    harness.simulator.updateStatusFeed((feed) => {
      id = postIncidentUpdate(feed, {
        name: 'Relay errors',
        impact: 'major',
        status: 'investigating',
        components: { [relay.id]: 'partial_outage' },
      });
    });
    expect((await incidents.next()).data?.incidentChanged).toMatchObject({
      kind: 'CREATED',
      incident: { id, status: 'INVESTIGATING', resolvedAt: null },
    });
    await settle(INCIDENT_DOCUMENTS);
    harness.simulator.updateStatusFeed((feed) =>
      postIncidentUpdate(feed, { id, status: 'monitoring', body: 'Fixed.' }),
    );
    expect((await incidents.next()).data?.incidentChanged).toMatchObject({
      kind: 'UPDATED',
      incident: {
        id,
        status: 'MONITORING',
        updates: [{ status: 'MONITORING', body: 'Fixed.' }, { status: 'INVESTIGATING' }],
      },
    });
    await settle(INCIDENT_DOCUMENTS);
    harness.simulator.updateStatusFeed((feed) =>
      postIncidentUpdate(feed, {
        id,
        status: 'resolved',
        components: { [relay.id]: 'operational' },
      }),
    );
    const resolved = await incidents.next();
    expect(resolved.data?.incidentChanged).toMatchObject({
      kind: 'RESOLVED',
      incident: { id, status: 'RESOLVED' },
    });
    const history = harness.simulator.statusFeed.incidentHistory?.incidents.find(
      (i) => i.id === id,
    );
    expect(resolved.data?.incidentChanged.incident.resolvedAt).toBe(
      new Date(history?.resolved_at ?? '').toISOString(),
    );
    await settle(INCIDENT_DOCUMENTS);
    expect(incidents.events).toHaveLength(3);
  });

  it('follows a maintenance from SCHEDULED through STARTED to COMPLETED', async () => {
    const explorer = leaf('Testnet', 'Network Explorer');
    const maintenances = await subscribe<MaintenanceEvent>(MAINTENANCES);
    await settle(MAINTENANCE_DOCUMENTS);
    let id = '';
    harness.simulator.updateStatusFeed((feed) => {
      id = postMaintenanceUpdate(feed, {
        name: 'Explorer upgrade',
        status: 'scheduled',
        componentIds: [explorer.id],
      });
    });
    expect((await maintenances.next()).data?.maintenanceChanged).toMatchObject({
      kind: 'SCHEDULED',
      maintenance: { id },
    });
    await settle(MAINTENANCE_DOCUMENTS);
    harness.simulator.updateStatusFeed((feed) =>
      postMaintenanceUpdate(feed, { id, status: 'in_progress' }),
    );
    expect((await maintenances.next()).data?.maintenanceChanged).toMatchObject({
      kind: 'STARTED',
      maintenance: { id, status: 'IN_PROGRESS' },
    });
    await settle(MAINTENANCE_DOCUMENTS);
    harness.simulator.updateStatusFeed((feed) =>
      postMaintenanceUpdate(feed, { id, status: 'completed' }),
    );
    const completed = await maintenances.next();
    expect(completed.data?.maintenanceChanged).toMatchObject({
      kind: 'COMPLETED',
      maintenance: { id, status: 'COMPLETED' },
    });
    expect(completed.data?.maintenanceChanged.maintenance.resolvedAt).not.toBeNull();
    await settle(MAINTENANCE_DOCUMENTS);
    expect(maintenances.events).toHaveLength(3);
  });
});
