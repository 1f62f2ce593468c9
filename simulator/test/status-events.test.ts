import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../src/server.js';
import { createSimulatedFeed } from '../src/status-feed/fixture.js';
import type {
  StatuspageIncidentHistory,
  StatuspageMaintenanceHistory,
  StatuspageSummary,
  StatuspageUpcoming,
} from '../src/status-feed/types.js';

const BASE = '/status/api/v2';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
});
afterEach(() => sim.setStatusFeed(createSimulatedFeed()));

async function get<T>(path: string): Promise<T> {
  return (await (await fetch(`${sim.origin}${BASE}${path}`)).json()) as T;
}

async function post(
  path: string,
  body: unknown,
): Promise<{ status: number; body: { id?: string; error?: string } }> {
  const response = await fetch(`${sim.origin}/_simulator/status-feed/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { id?: string } };
}

const leafNamed = (summary: StatuspageSummary, group: string, name: string) => {
  const parent = summary.components.find((c) => c.group && c.name === group);
  const leaf = summary.components.find((c) => c.group_id === parent?.id && c.name === name);
  if (!leaf || !parent) throw new Error(`no ${group} › ${name}`);
  return { leaf, parent };
};

describe('incidents through the control API, as Statuspage shows them', () => {
  it('posts an incident: listed unresolved, its components degraded, the page and roll-up updated', async () => {
    const before = await get<StatuspageSummary>('/summary.json');
    const { leaf, parent } = leafNamed(before, 'Mainnet', 'JSON-RPC Relay');
    const posted = await post('incidents', {
      name: 'Relay errors',
      impact: 'major',
      status: 'investigating',
      body: 'We are looking into it.',
      components: { [leaf.id]: 'major_outage' },
    });
    expect(posted.status).toBe(200);
    const id = posted.body.id;

    const summary = await get<StatuspageSummary>('/summary.json');
    const incident = summary.incidents.find((i) => i.id === id);
    expect(incident).toMatchObject({
      name: 'Relay errors',
      status: 'investigating',
      impact: 'major',
      resolved_at: null,
    });
    expect(incident?.incident_updates[0]?.affected_components).toEqual([
      {
        code: leaf.id,
        name: `Mainnet - JSON-RPC Relay`,
        old_status: 'operational',
        new_status: 'major_outage',
      },
    ]);
    expect(incident?.components.map((c) => [c.id, c.status])).toEqual([[leaf.id, 'major_outage']]);
    const component = summary.components.find((c) => c.id === leaf.id);
    expect(component?.status).toBe('major_outage');
    expect(Date.parse(component?.updated_at ?? '')).toBeGreaterThan(Date.parse(leaf.updated_at));
    expect(summary.components.find((c) => c.id === parent.id)?.status).toBe('major_outage');
    expect(summary.status.indicator).toBe('major');
    expect(Date.parse(summary.page.updated_at)).toBeGreaterThan(Date.parse(before.page.updated_at));
    const history = await get<StatuspageIncidentHistory>('/incidents.json');
    expect(history.incidents[0]?.id).toBe(id);
  });

  it('resolves an incident: it leaves summary.json and stays in incidents.json with resolved_at', async () => {
    const { leaf } = leafNamed(
      await get<StatuspageSummary>('/summary.json'),
      'Testnet',
      'Network Explorer',
    );
    const { body } = await post('incidents', {
      name: 'Explorer down',
      status: 'identified',
      components: { [leaf.id]: 'partial_outage' },
    });
    await post('incidents', { id: body.id, status: 'monitoring', body: 'Fixed, watching.' });
    const resolved = await post('incidents', {
      id: body.id,
      status: 'resolved',
      body: 'Resolved.',
      components: { [leaf.id]: 'operational' },
    });
    expect(resolved.status).toBe(200);

    const summary = await get<StatuspageSummary>('/summary.json');
    expect(summary.incidents.some((i) => i.id === body.id)).toBe(false);
    expect(summary.components.find((c) => c.id === leaf.id)?.status).toBe('operational');
    const history = await get<StatuspageIncidentHistory>('/incidents.json');
    const incident = history.incidents.find((i) => i.id === body.id);
    expect(incident).toMatchObject({ status: 'resolved' });
    expect(incident?.resolved_at).toBe(incident?.incident_updates[0]?.created_at);
    expect(incident?.monitoring_at).toBe(incident?.incident_updates[1]?.created_at);
    expect(incident?.incident_updates.map((u) => u.status)).toEqual([
      'resolved',
      'monitoring',
      'identified',
    ]);
  });

  it('updates an incident of the fixture in place in both documents', async () => {
    const [open] = (await get<StatuspageSummary>('/summary.json')).incidents;
    const before = await get<StatuspageIncidentHistory>('/incidents.json');
    await post('incidents', { id: open?.id, status: 'resolved', body: 'Over.' });
    const after = await get<StatuspageIncidentHistory>('/incidents.json');
    expect(after.incidents.map((i) => i.id)).toEqual(before.incidents.map((i) => i.id));
    expect(after.incidents.find((i) => i.id === open?.id)?.status).toBe('resolved');
  });

  it.each([
    [{ status: 'investigating' }, /needs a name/],
    [{ id: 'nope', status: 'resolved' }, /Unknown incident/],
    [{ name: 'x', status: 'bad' }, /status must be one of/],
    [
      { name: 'x', status: 'investigating', components: { nope: 'major_outage' } },
      /Unknown leaf component/,
    ],
  ])('refuses %j with 400, changing nothing', async (body, message) => {
    const before = await get<StatuspageSummary>('/summary.json');
    const answer = await post('incidents', body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(message);
    expect(await get<StatuspageSummary>('/summary.json')).toEqual(before);
  });
});

describe('maintenances through the control API', () => {
  it('schedules, starts and completes a maintenance across the three documents', async () => {
    const { leaf } = leafNamed(
      await get<StatuspageSummary>('/summary.json'),
      'Mainnet',
      'Network Explorer',
    );
    const scheduled = await post('maintenances', {
      name: 'Explorer upgrade',
      status: 'scheduled',
      componentIds: [leaf.id],
      scheduledFor: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const id = scheduled.body.id;
    expect(
      (
        await get<StatuspageUpcoming>('/scheduled-maintenances/upcoming.json')
      ).scheduled_maintenances.some((m) => m.id === id),
    ).toBe(true);

    await post('maintenances', { id, status: 'in_progress' });
    let summary = await get<StatuspageSummary>('/summary.json');
    expect(summary.scheduled_maintenances.find((m) => m.id === id)?.status).toBe('in_progress');
    expect(summary.components.find((c) => c.id === leaf.id)?.status).toBe('under_maintenance');
    expect(
      (
        await get<StatuspageUpcoming>('/scheduled-maintenances/upcoming.json')
      ).scheduled_maintenances.some((m) => m.id === id),
    ).toBe(false);

    await post('maintenances', { id, status: 'completed', body: 'Done.' });
    summary = await get<StatuspageSummary>('/summary.json');
    expect(summary.scheduled_maintenances.some((m) => m.id === id)).toBe(false);
    expect(summary.components.find((c) => c.id === leaf.id)?.status).toBe('operational');
    const history = await get<StatuspageMaintenanceHistory>('/scheduled-maintenances.json');
    const done = history.scheduled_maintenances.find((m) => m.id === id);
    expect(done?.status).toBe('completed');
    expect(done?.resolved_at).toBe(done?.incident_updates[0]?.created_at);
  });
});
