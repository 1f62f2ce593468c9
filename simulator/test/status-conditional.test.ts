/**
 * Conditional GETs of the status feed documents, as Statuspage answers them (a weak ETag of the
 * body, 304 to an `If-None-Match` naming it) and as a page of static files does (`Last-Modified`,
 * 304 to an `If-Modified-Since` not before it).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../src/server.js';
import { createSimulatedFeed } from '../src/status-feed/fixture.js';
import { setComponentStatuses } from '../src/status-feed/status-rollup.js';

const SUMMARY = '/status/api/v2/summary.json';
const DOCUMENTS = [
  SUMMARY,
  '/status/api/v2/scheduled-maintenances/upcoming.json',
  '/status/api/v2/incidents.json',
  '/status/api/v2/scheduled-maintenances.json',
];
/** Rack's weak ETag: 32 hex digits, as www.githubstatus.com sends it. */
const RACK_ETAG = /^W\/"[0-9a-f]{32}"$/;
const WRITTEN = new Date('2026-11-02T10:20:30.000Z');

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({
    statusPages: {
      cloud: createSimulatedFeed(),
      files: { documents: { '/summary.json': { page: { id: 'x' } } }, lastModified: WRITTEN },
      bare: { documents: { '/summary.json': { page: { id: 'y' } } } },
    },
  });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.setStatusFeed(createSimulatedFeed());
  sim.resetRequests();
});

const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  fetch(`${sim.origin}${path}`, { method, headers });

describe('the Statuspage feed', () => {
  it('gives every document a weak ETag of its own, and no Last-Modified', async () => {
    const tags = new Set<string>();
    for (const path of DOCUMENTS) {
      const response = await get(path);
      expect(response.status).toBe(200);
      const etag = response.headers.get('etag') ?? '';
      expect(etag).toMatch(RACK_ETAG);
      expect(response.headers.get('last-modified')).toBeNull();
      tags.add(etag);
      // The same bytes, the same tag.
      expect((await get(path)).headers.get('etag')).toBe(etag);
    }
    expect(tags.size).toBe(DOCUMENTS.length);
  });

  it('answers 304 without a body to a GET or HEAD naming the ETag, and counts it', async () => {
    const etag = (await get(SUMMARY)).headers.get('etag') ?? '';
    for (const method of ['GET', 'HEAD']) {
      const again = await get(SUMMARY, { 'if-none-match': etag }, method);
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.headers.get('content-type')).toBeNull();
      expect(await again.text()).toBe('');
    }
    expect(sim.notModifiedCount(SUMMARY)).toBe(2);
    expect(sim.notModifiedCount()).toBe(2);
    expect(sim.requestCount(SUMMARY)).toBe(3);
    // Another tag, or the tag without its weak prefix (Rack compares the whole value): in full.
    for (const other of ['W/"0123456789abcdef0123456789abcdef"', etag.slice(2)]) {
      const full = await get(SUMMARY, { 'if-none-match': other });
      expect(full.status).toBe(200);
      expect((await full.json()).page).toBeDefined();
    }
    expect(sim.notModifiedCount()).toBe(2);
    sim.resetRequests();
    expect(sim.notModifiedCount()).toBe(0);
  });

  it('changes the ETag with the page: the old one gets the new document', async () => {
    const before = await get(SUMMARY);
    const etag = before.headers.get('etag') ?? '';
    const leaf = sim.statusFeed.summary.components.find((component) => !component.group);
    if (!leaf) throw new Error('no leaf component');
    sim.updateStatusFeed((feed) => setComponentStatuses(feed, { [leaf.id]: 'major_outage' }));
    const after = await get(SUMMARY, { 'if-none-match': etag });
    expect(after.status).toBe(200);
    const changed = after.headers.get('etag') ?? '';
    expect(changed).toMatch(RACK_ETAG);
    expect(changed).not.toBe(etag);
    const summary = (await after.json()) as { components: { id: string; status: string }[] };
    expect(summary.components.find((component) => component.id === leaf.id)?.status).toBe(
      'major_outage',
    );
    expect((await get(SUMMARY, { 'if-none-match': changed })).status).toBe(304);
  });

  it('serves the pages by slug the same way', async () => {
    const path = '/status/cloud/api/v2/incidents.json';
    const etag = (await get(path)).headers.get('etag') ?? '';
    expect(etag).toMatch(RACK_ETAG);
    expect((await get(path, { 'if-none-match': etag })).status).toBe(304);
    expect(sim.notModifiedCount(path)).toBe(1);
  });

  it('lets If-None-Match win over If-Modified-Since', async () => {
    const response = await get(SUMMARY, {
      'if-none-match': 'W/"0123456789abcdef0123456789abcdef"',
      'if-modified-since': new Date(Date.now() + 86_400_000).toUTCString(),
    });
    expect(response.status).toBe(200);
  });
});

describe('a page of static files', () => {
  const FILE = '/status/files/api/v2/summary.json';

  it('sends Last-Modified, and answers 304 to an If-Modified-Since not before it', async () => {
    const first = await get(FILE);
    expect(first.status).toBe(200);
    expect(first.headers.get('last-modified')).toBe(WRITTEN.toUTCString());
    expect(first.headers.get('etag')).toBeNull();
    for (const since of [WRITTEN, new Date(WRITTEN.getTime() + 60_000)]) {
      const again = await get(FILE, { 'if-modified-since': since.toUTCString() });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
    }
    const older = await get(FILE, {
      'if-modified-since': new Date(WRITTEN.getTime() - 1_000).toUTCString(),
    });
    expect(older.status).toBe(200);
    expect((await get(FILE, { 'if-modified-since': 'yesterday' })).status).toBe(200);
    expect(sim.notModifiedCount(FILE)).toBe(2);
  });

  it('changes Last-Modified when the page is written again', async () => {
    const rewritten = new Date(WRITTEN.getTime() + 3_600_000);
    sim.setStatusPage('files', {
      documents: { '/summary.json': { page: { id: 'z' } } },
      lastModified: rewritten,
    });
    const response = await get(FILE, { 'if-modified-since': WRITTEN.toUTCString() });
    expect(response.status).toBe(200);
    expect(response.headers.get('last-modified')).toBe(rewritten.toUTCString());
    expect(await response.json()).toEqual({ page: { id: 'z' } });
  });

  it('sends no validators without a time, and answers every GET in full', async () => {
    const path = '/status/bare/api/v2/summary.json';
    const response = await get(path, { 'if-modified-since': new Date().toUTCString() });
    expect(response.status).toBe(200);
    expect(response.headers.get('last-modified')).toBeNull();
    expect(response.headers.get('etag')).toBeNull();
  });
});
