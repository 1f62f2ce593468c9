import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Simulator, startSimulator } from '../src/server.js';
import { createSimulatedFeed, STATUS_FEED_PRESETS } from '../src/status-feed/fixture.js';
import type {
  StatuspageComponent,
  StatuspageIncidentHistory,
  StatuspageMaintenanceHistory,
  StatuspageSummary,
  StatuspageUpcoming,
} from '../src/status-feed/types.js';

const SUMMARY = '/status/api/v2/summary.json';
const UPCOMING = '/status/api/v2/scheduled-maintenances/upcoming.json';
const ID = /^[a-z0-9]{12}$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$/;

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator();
});

afterAll(async () => {
  await sim.close();
});

afterEach(() => {
  sim.clearFaults();
  sim.setStatusFeed(createSimulatedFeed());
});

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(`${sim.origin}${path}`);
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

async function control(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${sim.origin}/_simulator${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Asserts every cross-reference a Statuspage summary carries is consistent. */
function expectConsistent(summary: StatuspageSummary): void {
  const pageId = summary.page.id;
  expect(pageId).toMatch(ID);
  expect(summary.page.updated_at).toMatch(TIMESTAMP);
  const byId = new Map<string, StatuspageComponent>();
  for (const component of summary.components) {
    expect(component.id).toMatch(ID);
    expect(byId.has(component.id)).toBe(false);
    byId.set(component.id, component);
    expect(component.page_id).toBe(pageId);
    expect(component.created_at).toMatch(TIMESTAMP);
    expect(component.updated_at).toMatch(TIMESTAMP);
  }
  for (const component of summary.components) {
    if (component.group) {
      expect(component.group_id).toBeNull();
      const positions = component.components.map((id) => {
        const child = byId.get(id);
        expect(child, `child ${id} of ${component.name}`).toBeDefined();
        expect(child?.group).toBe(false);
        expect(child?.group_id).toBe(component.id);
        return child?.position;
      });
      expect(positions).toEqual(positions.map((_, index) => index + 1));
    } else if (component.group_id !== null) {
      const group = byId.get(component.group_id);
      expect(group?.group).toBe(true);
      if (group?.group) expect(group.components).toContain(component.id);
    }
  }

  for (const event of [...summary.incidents, ...summary.scheduled_maintenances]) {
    expect(event.id).toMatch(ID);
    expect(event.page_id).toBe(pageId);
    expect(event.incident_updates.length).toBeGreaterThan(0);
    const times = event.incident_updates.map((update) => Date.parse(update.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    for (const update of event.incident_updates) {
      expect(update.incident_id).toBe(event.id);
      for (const affected of update.affected_components ?? []) {
        expect(byId.has(affected.code), `affected ${affected.code}`).toBe(true);
      }
    }
    for (const copy of event.components) {
      expect(copy).toEqual(byId.get(copy.id));
    }
  }
}

describe('status feed endpoints', () => {
  it('serves a coherent demo summary.json', async () => {
    const response = await fetch(`${sim.origin}${SUMMARY}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const summary = (await response.json()) as StatuspageSummary;
    expectConsistent(summary);

    const groups = summary.components.filter((component) => component.group);
    expect(groups.map((group) => [group.name, group.position])).toEqual([
      ['Mainnet', 1],
      ['Testnet', 2],
      ['Previewnet', 3],
    ]);
    const topLevel = summary.components.filter((c) => !c.group && c.group_id === null);
    expect(topLevel).toHaveLength(2);
    expect(summary.status).toEqual({ indicator: 'minor', description: 'Minor Service Outage' });

    expect(summary.incidents).toHaveLength(1);
    const [incident] = summary.incidents;
    expect(incident?.status).toBe('monitoring');
    expect(incident?.impact).toBe('minor');
    expect(incident?.incident_updates.map((update) => update.status)).toEqual([
      'monitoring',
      'identified',
      'investigating',
    ]);
    expect(incident?.components).toHaveLength(2);

    expect(summary.scheduled_maintenances.map((m) => [m.status, m.impact])).toEqual([
      ['in_progress', 'maintenance'],
      ['scheduled', 'maintenance'],
    ]);
  });

  it('serves upcoming.json with only scheduled maintenances, one absent from the summary', async () => {
    const summary = await getJson<StatuspageSummary>(SUMMARY);
    const upcoming = await getJson<StatuspageUpcoming>(UPCOMING);
    expect(upcoming.page).toEqual(summary.page);
    expect(upcoming.scheduled_maintenances.every((m) => m.status === 'scheduled')).toBe(true);
    const inSummary = new Set(summary.scheduled_maintenances.map((m) => m.id));
    const onlyUpcoming = upcoming.scheduled_maintenances.filter((m) => !inSummary.has(m.id));
    expect(onlyUpcoming).toHaveLength(1);
    expect(onlyUpcoming[0]?.name).toMatch(/Testnet/);
    const shared = upcoming.scheduled_maintenances.filter((m) => inSummary.has(m.id));
    expect(shared.map((m) => m.name)).toEqual([expect.stringMatching(/Mainnet/)]);
    const componentIds = new Set(summary.components.map((component) => component.id));
    for (const maintenance of upcoming.scheduled_maintenances) {
      expect(maintenance.components.every((c) => componentIds.has(c.id))).toBe(true);
    }
  });

  it('serves the history documents: resolved incidents and completed maintenances, newest first', async () => {
    const summary = await getJson<StatuspageSummary>(SUMMARY);
    const incidents = await getJson<StatuspageIncidentHistory>('/status/api/v2/incidents.json');
    const maintenances = await getJson<StatuspageMaintenanceHistory>(
      '/status/api/v2/scheduled-maintenances.json',
    );
    expect(incidents.page).toEqual(summary.page);
    const resolved = incidents.incidents.filter((incident) => incident.status === 'resolved');
    expect(resolved.length).toBeGreaterThan(0);
    for (const incident of resolved) expect(incident.resolved_at).toMatch(TIMESTAMP);
    // The summary's unresolved incidents are in the history too; resolved ones only there.
    for (const incident of summary.incidents) {
      expect(incidents.incidents.map((i) => i.id)).toContain(incident.id);
    }
    expect(summary.incidents.map((i) => i.id)).not.toContain(resolved[0]?.id);
    const created = incidents.incidents.map((incident) => Date.parse(incident.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect(incidents.incidents.length).toBeLessThanOrEqual(50);

    const completed = maintenances.scheduled_maintenances.filter((m) => m.status === 'completed');
    expect(completed.length).toBeGreaterThan(0);
    expect(summary.scheduled_maintenances.map((m) => m.id)).not.toContain(completed[0]?.id);
  });

  it('answers 404 for a history document the feed does not have, as such hosts do', async () => {
    const { incidentHistory: _incidents, ...rest } = createSimulatedFeed();
    sim.setStatusFeed(rest);
    const response = await fetch(`${sim.origin}/status/api/v2/incidents.json`);
    expect(response.status).toBe(404);
    expect((await fetch(`${sim.origin}/status/api/v2/scheduled-maintenances.json`)).status).toBe(
      200,
    );
  });

  it('builds deterministic, coherent generated presets', () => {
    const now = new Date('2026-11-20T14:03:11.512Z');
    const realistic = createSimulatedFeed({ ...STATUS_FEED_PRESETS.realistic, now });
    expect(createSimulatedFeed({ ...STATUS_FEED_PRESETS.realistic, now })).toEqual(realistic);
    expectConsistent(realistic.summary);
    expect(realistic.summary.components).toHaveLength(66);
    expect(realistic.summary.incidents).toHaveLength(5);
    expect(realistic.summary.page.updated_at).toMatch(/-05:00$/);
    expect(realistic.summary.components.map((c) => c.name)).toContain('Service 4.7');

    const large = createSimulatedFeed({ ...STATUS_FEED_PRESETS.large, now });
    expectConsistent(large.summary);
    expect(large.summary.components).toHaveLength(500);
  });

  it('answers 404 for unknown paths and 405 for other methods', async () => {
    const unknown = await fetch(`${sim.statusBaseUrl}/incidents/unresolved.json`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'Not found' });
    const post = await fetch(`${sim.origin}${SUMMARY}`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect((await fetch(`${sim.origin}/nowhere`)).status).toBe(404);
  });

  it('serves replaced and edited feeds', async () => {
    sim.setStatusFeed(createSimulatedFeed(STATUS_FEED_PRESETS.realistic));
    expect((await getJson<StatuspageSummary>(SUMMARY)).components).toHaveLength(66);
    sim.updateStatusFeed((feed) => {
      feed.summary.incidents = [];
    });
    expect((await getJson<StatuspageSummary>(SUMMARY)).incidents).toEqual([]);
  });
});

describe('faults', () => {
  it('status: answers with the given status, headers and body', async () => {
    sim.setFault('status', '/summary.json', { kind: 'status', status: 503 });
    const unavailable = await fetch(`${sim.origin}${SUMMARY}`);
    expect(unavailable.status).toBe(503);
    expect(await unavailable.json()).toEqual({ error: 'Simulated 503 Service Unavailable' });

    sim.setFault('status', '/summary.json', {
      kind: 'status',
      status: 429,
      body: 'slow down',
      headers: { 'Retry-After': '2', 'content-type': 'text/plain' },
    });
    const limited = await fetch(`${sim.origin}${SUMMARY}`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(limited.headers.get('content-type')).toBe('text/plain');
    expect(await limited.text()).toBe('slow down');
  });

  it('delay: answers normally after the delay', async () => {
    sim.setFault('status', '/summary.json', { kind: 'delay', ms: 200 });
    const started = performance.now();
    const summary = await getJson<StatuspageSummary>(SUMMARY);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(summary.components.length).toBeGreaterThan(0);
  });

  it('html: answers 200 with an HTML error page', async () => {
    sim.setFault('status', '/summary.json', { kind: 'html' });
    const response = await fetch(`${sim.origin}${SUMMARY}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toMatch(/^<!DOCTYPE html>/);
  });

  it('truncated: answers 200 JSON cut in half', async () => {
    const full = await (await fetch(`${sim.origin}${SUMMARY}`)).text();
    sim.setFault('status', '/summary.json', { kind: 'truncated' });
    const response = await fetch(`${sim.origin}${SUMMARY}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await response.text();
    expect(text).toBe(full.slice(0, text.length));
    expect(text.length).toBe(Math.floor(full.length / 2));
    expect(() => JSON.parse(text)).toThrow();
  });

  it('empty: answers 200 with no body', async () => {
    sim.setFault('status', '/summary.json', { kind: 'empty' });
    const response = await fetch(`${sim.origin}${SUMMARY}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it('reset: drops the connection mid-body', async () => {
    sim.setFault('status', '/summary.json', { kind: 'reset' });
    await expect(fetch(`${sim.origin}${SUMMARY}`).then((r) => r.text())).rejects.toThrow();
    // The server keeps serving afterwards.
    sim.clearFaults();
    await getJson<StatuspageSummary>(SUMMARY);
  });

  it('hang: never answers', async () => {
    sim.setFault('status', '/summary.json', { kind: 'hang' });
    await expect(
      fetch(`${sim.origin}${SUMMARY}`, { signal: AbortSignal.timeout(300) }),
    ).rejects.toThrow();
  });

  it('times: limits how many requests get the fault', async () => {
    sim.setFault('status', '/summary.json', { kind: 'status', status: 503 }, { times: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${sim.origin}${SUMMARY}`)).status);
    expect(statuses).toEqual([503, 503, 200]);
  });

  it("'*' covers every path of the upstream, and an exact path wins over it", async () => {
    sim.setFault('status', '*', { kind: 'status', status: 502 });
    sim.setFault('status', '/summary.json', { kind: 'status', status: 504 });
    expect((await fetch(`${sim.origin}${UPCOMING}`)).status).toBe(502);
    expect((await fetch(`${sim.origin}${SUMMARY}`)).status).toBe(504);
    sim.setFault('status', '*', null);
    expect((await fetch(`${sim.origin}${UPCOMING}`)).status).toBe(200);
  });

  it('leaves other paths alone', async () => {
    sim.setFault('status', '/summary.json', { kind: 'status', status: 500 });
    expect((await fetch(`${sim.origin}${UPCOMING}`)).status).toBe(200);
  });

  it('rejects invalid faults', () => {
    expect(() => sim.setFault('status', 'summary.json', { kind: 'empty' })).toThrow(TypeError);
    expect(() => sim.setFault('status', '/x', { kind: 'status', status: 42 })).toThrow(TypeError);
    expect(() => sim.setFault('status', '/x', { kind: 'delay', ms: -1 })).toThrow(TypeError);
    expect(() => sim.setFault('status', '/x', { kind: 'empty' }, { times: 0 })).toThrow(TypeError);
  });
});

describe('request log', () => {
  it('counts requests by exact path, ignoring control calls', async () => {
    sim.resetRequests();
    await fetch(`${sim.origin}${SUMMARY}`);
    await fetch(`${sim.origin}${SUMMARY}?cache=1`, { headers: { 'x-test': 'yes' } });
    await fetch(`${sim.origin}${UPCOMING}`);
    await control('GET', '/requests');
    expect(sim.requestCount()).toBe(3);
    expect(sim.requestCount(SUMMARY)).toBe(2);
    expect(sim.requestCount(UPCOMING)).toBe(1);
    expect(sim.requestCount('/status/api/v2')).toBe(0);
    const [first, second] = sim.requests;
    expect(first).toMatchObject({ method: 'GET', path: SUMMARY, search: '' });
    expect(second).toMatchObject({ path: SUMMARY, search: '?cache=1' });
    expect(second?.headers['x-test']).toBe('yes');
    expect(second?.time).toBeInstanceOf(Date);
    sim.resetRequests();
    expect(sim.requestCount()).toBe(0);
    expect(sim.requests).toEqual([]);
  });

  it('keeps a bounded log but exact counts', async () => {
    const small = await startSimulator({ requestLogCapacity: 3 });
    try {
      for (let i = 0; i < 5; i++) await fetch(`${small.statusBaseUrl}/summary.json?n=${i}`);
      expect(small.requestCount()).toBe(5);
      expect(small.requests.map((request) => request.search)).toEqual(['?n=2', '?n=3', '?n=4']);
    } finally {
      await small.close();
    }
  });
});

describe('control API', () => {
  it('sets and clears faults', async () => {
    const set = await control('POST', '/faults', {
      upstream: 'status',
      path: '/summary.json',
      fault: { kind: 'status', status: 503 },
      times: 1,
    });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ faults: [{ path: '/summary.json', remaining: 1 }] });
    expect((await fetch(`${sim.origin}${SUMMARY}`)).status).toBe(503);
    expect((await fetch(`${sim.origin}${SUMMARY}`)).status).toBe(200);

    await control('POST', '/faults', { upstream: 'status', path: '*', fault: { kind: 'empty' } });
    expect(await (await fetch(`${sim.origin}${UPCOMING}`)).text()).toBe('');
    await control('POST', '/faults', { upstream: 'status', path: '*', fault: null });
    expect((await fetch(`${sim.origin}${UPCOMING}`)).status).toBe(200);

    await control('POST', '/faults', { upstream: 'status', path: '*', fault: { kind: 'html' } });
    const cleared = await control('DELETE', '/faults');
    expect(await cleared.json()).toEqual({ faults: [] });
    expect((await fetch(`${sim.origin}${UPCOMING}`)).status).toBe(200);
  });

  it('reports and resets request counts', async () => {
    expect((await control('DELETE', '/requests')).status).toBe(200);
    await fetch(`${sim.origin}${SUMMARY}`);
    await fetch(`${sim.origin}${SUMMARY}`);
    const counts = await (await control('GET', '/requests')).json();
    expect(counts).toEqual({ count: 2, byPath: { [SUMMARY]: 2 } });
    await control('DELETE', '/requests');
    expect(await (await control('GET', '/requests')).json()).toEqual({ count: 0, byPath: {} });
  });

  it('resets the feed to a preset and sets component statuses', async () => {
    const reset = await control('PUT', '/status-feed', { preset: 'realistic' });
    expect(reset.status).toBe(200);
    expect((await getJson<StatuspageSummary>(SUMMARY)).components).toHaveLength(66);

    await control('PUT', '/status-feed', { preset: 'demo' });
    const before = await getJson<StatuspageSummary>(SUMMARY);
    const previewnet = before.components.find((c) => c.group && c.name === 'Previewnet');
    const children = previewnet?.group ? previewnet.components : [];
    const statuses = Object.fromEntries(children.map((id) => [id, 'major_outage']));
    const changed = await control('PUT', '/status-feed', { components: statuses });
    expect(changed.status).toBe(200);

    const after = await getJson<StatuspageSummary>(SUMMARY);
    expectConsistent(after);
    expect(after.components.find((c) => c.id === previewnet?.id)?.status).toBe('major_outage');
    expect(after.status.indicator).toBe('major');
    const maintenance = after.scheduled_maintenances.find((m) => m.status === 'in_progress');
    expect(maintenance?.components.every((c) => c.status === 'major_outage')).toBe(true);
  });

  it.each([
    ['/faults', 'POST', 'not json', /JSON object/],
    ['/faults', 'POST', [], /JSON object/],
    ['/faults', 'POST', { upstream: 'nope', path: '*', fault: null }, /upstream/],
    ['/faults', 'POST', { upstream: 'status', path: 'x', fault: null }, /path/],
    ['/faults', 'POST', { upstream: 'status', path: '*' }, /fault is required/],
    ['/faults', 'POST', { upstream: 'status', path: '*', fault: { kind: 'boom' } }, /kind/],
    [
      '/faults',
      'POST',
      { upstream: 'status', path: '*', fault: { kind: 'status', status: 503 }, times: 0 },
      /times/,
    ],
    ['/faults', 'POST', { upstream: 'status', path: '*', fault: null, time: 1 }, /Unknown field/],
    ['/status-feed', 'PUT', {}, /preset/],
    ['/status-feed', 'PUT', { preset: 'huge' }, /preset must be one of/],
    ['/status-feed', 'PUT', { components: { nope: 'operational' } }, /Unknown component/],
    ['/status-feed', 'PUT', { components: [] }, /components must be an object/],
  ])('rejects a bad %s %s body with 400 (%j)', async (path, method, body, message) => {
    const response = await control(method, path, body);
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: string };
    expect(error).toMatch(message);
  });

  it('rejects bad component statuses and group ids with 400, changing nothing', async () => {
    const summary = await getJson<StatuspageSummary>(SUMMARY);
    const group = summary.components.find((c) => c.group);
    const leaf = summary.components.find((c) => !c.group && c.status === 'operational');
    const badStatus = await control('PUT', '/status-feed', {
      components: { [leaf?.id ?? '']: 'on_fire' },
    });
    expect(badStatus.status).toBe(400);
    const groupId = await control('PUT', '/status-feed', {
      components: { [leaf?.id ?? '']: 'major_outage', [group?.id ?? '']: 'operational' },
    });
    expect(groupId.status).toBe(400);
    expect(((await groupId.json()) as { error: string }).error).toMatch(/groups/);
    expect(await getJson<StatuspageSummary>(SUMMARY)).toEqual(summary);
  });

  it('answers 404 and 405 for unknown control routes', async () => {
    expect((await control('GET', '/nope')).status).toBe(404);
    const wrongMethod = await control('PATCH', '/faults', {});
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, POST, DELETE');
    expect((await control('GET', '/health')).status).toBe(200);
  });
});

describe('close', () => {
  it('resolves while a request hangs, failing that request', async () => {
    const own = await startSimulator();
    own.setFault('status', '*', { kind: 'hang' });
    const pending = fetch(`${own.statusBaseUrl}/summary.json`);
    const outcome = pending.then(
      () => 'answered',
      () => 'failed',
    );
    await vi.waitFor(() => expect(own.requestCount()).toBeGreaterThan(0));
    const closed = own.close().then(() => 'closed');
    const timeout = new Promise((resolve) => setTimeout(() => resolve('timed out'), 2_000));
    expect(await Promise.race([closed, timeout])).toBe('closed');
    expect(await outcome).toBe('failed');
  });

  it('resolves while a delayed request waits', async () => {
    const own = await startSimulator();
    own.setFault('status', '*', { kind: 'delay', ms: 60_000 });
    const outcome = fetch(`${own.statusBaseUrl}/summary.json`).then(
      () => 'answered',
      () => 'failed',
    );
    await vi.waitFor(() => expect(own.requestCount()).toBeGreaterThan(0));
    // Waiting for the delay would take a minute, past the test's timeout.
    await own.close();
    expect(await outcome).toBe('failed');
  });
});
