import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createSimulatedFeed,
  type SimulatedFeed,
} from '../../../simulator/src/status-feed/fixture.js';
import { type Harness, startHarness } from '../../helpers/harness.js';
import { withOwnPages } from '../../helpers/own-pages.js';
import { editServed } from '../../helpers/shared-harness.js';

type Loose = Record<string, unknown>;

/** Edits the feed as raw JSON, the way a real upstream can drift from its documented shape. */
const editRaw = (harness: Harness, edit: (summary: Loose, upcoming: Loose) => void) =>
  editServed(harness, (feed) =>
    edit(feed.summary as unknown as Loose, feed.upcoming as unknown as Loose),
  );

/*
 * One gateway for the file, which re-reads the feed on every read (a TTL of 0). Each lenient
 * reading puts the demo feed of the default page back, edits it, and reads once the gateway has
 * read the edit; the feed that is not one is a page of its own, read first by its test.
 */
let harness: Harness;
beforeAll(async () => {
  harness = await startHarness(withOwnPages(['not-a-feed'], { env: { STATUS_CACHE_TTL_MS: 0 } }));
});
afterAll(() => harness.close());

describe('lenient reading of real-world feed data', () => {
  beforeEach(() => harness.simulator.setStatusFeed(createSimulatedFeed()));

  it('maps values it does not know to UNKNOWN instead of failing', async () => {
    await editRaw(harness, (summary) => {
      (summary.status as Loose).indicator = 'apocalyptic';
      const [component] = summary.components as Loose[];
      if (component) component.status = 'on_fire';
      const [incident] = summary.incidents as Loose[];
      if (incident) {
        incident.status = 'brainstorming';
        incident.impact = 'galactic';
        const [update] = incident.incident_updates as Loose[];
        if (update) update.status = 'pondering';
      }
      const [maintenance] = summary.scheduled_maintenances as Loose[];
      if (maintenance) maintenance.status = 'snoozing';
    });
    const { body } = await harness.execute<{
      statusPage: {
        status: { indicator: string };
        components: { status: string }[];
        incidents: { status: string; impact: string; updates: { status: string }[] }[];
        scheduledMaintenances: { status: string }[];
      };
    }>(`{ statusPage {
      status { indicator }
      components { status }
      incidents { status impact updates { status } }
      scheduledMaintenances { status }
    } }`);
    expect(body.errors).toBeUndefined();
    const page = body.data?.statusPage;
    expect(page?.status.indicator).toBe('UNKNOWN');
    expect(page?.components.map((c) => c.status)).toContain('UNKNOWN');
    expect(page?.incidents[0]?.status).toBe('UNKNOWN');
    expect(page?.incidents[0]?.impact).toBe('UNKNOWN');
    expect(page?.incidents[0]?.updates.map((u) => u.status)).toContain('UNKNOWN');
    expect(page?.scheduledMaintenances[0]?.status).toBe('UNKNOWN');
  });

  it('accepts the maintenance indicator and impact that real feeds send', async () => {
    await editRaw(harness, (summary) => {
      (summary.status as Loose).indicator = 'maintenance';
      const [maintenance] = summary.scheduled_maintenances as Loose[];
      if (maintenance) maintenance.impact = 'major';
    });
    const { body } = await harness.execute<{
      statusPage: { status: { indicator: string }; scheduledMaintenances: { impact: string }[] };
    }>('{ statusPage { status { indicator } scheduledMaintenances { impact } } }');
    expect(body.data?.statusPage.status.indicator).toBe('MAINTENANCE');
    expect(body.data?.statusPage.scheduledMaintenances[0]?.impact).toBe('MAJOR');
  });

  it('reads null or missing lists as empty and ignores fields it does not know', async () => {
    await editRaw(harness, (summary, upcoming) => {
      summary.incidents = null;
      delete summary.scheduled_maintenances;
      summary.brand_new_section = { anything: [1, 2, 3] };
      (summary.page as Loose).favicon = 'https://example.com/x.ico';
      upcoming.scheduled_maintenances = null;
    });
    const { body } = await harness.execute<{
      statusPage: {
        incidents: unknown[];
        scheduledMaintenances: unknown[];
        upcomingMaintenances: unknown[];
      };
    }>(
      '{ statusPage { incidents { id } scheduledMaintenances { id } upcomingMaintenances { id } } }',
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.statusPage).toEqual({
      incidents: [],
      scheduledMaintenances: [],
      upcomingMaintenances: [],
    });
  });

  it('keeps a component whose group is missing visible at the top level', async () => {
    let orphanId = '';
    await editRaw(harness, (summary) => {
      const components = summary.components as Loose[];
      const orphan = components.find((c) => c.group_id !== null);
      if (!orphan) throw new Error('the demo feed has grouped components');
      orphan.group_id = 'gone-group-id';
      orphanId = String(orphan.id);
    });
    const { body } = await harness.execute<{
      statusPage: { components: { id: string; group: null }[] };
      component: { group: null };
    }>(
      `query ($id: ID!) { statusPage { components(topLevel: true) { id group { id } } } component(id: $id) { group { id } } }`,
      { id: orphanId },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.statusPage.components.map((c) => c.id)).toContain(orphanId);
    expect(body.data?.component.group).toBeNull();
  });

  it('leaves out a malformed item, logs why, and serves the rest', async () => {
    let total = 0;
    const logged = harness.logs.length;
    await editRaw(harness, (summary) => {
      const components = summary.components as Loose[];
      total = components.length;
      const [first] = components;
      if (first) delete first.id;
      const [incident] = summary.incidents as Loose[];
      if (incident) {
        incident.shortlink = 'not a url';
        incident.resolved_at = 'yesterday-ish';
        (incident.incident_updates as Loose[]).push({ id: 'broken', body: 42 });
      }
    });
    const { body } = await harness.execute<{
      statusPage: {
        components: unknown[];
        incidents: { shortlink: null; resolvedAt: null; updates: unknown[] }[];
      };
    }>('{ statusPage { components { id } incidents { shortlink resolvedAt updates { id } } } }');
    expect(body.errors).toBeUndefined();
    expect(body.data?.statusPage.components).toHaveLength(total - 1);
    expect(body.data?.statusPage.incidents[0]?.shortlink).toBeNull();
    expect(body.data?.statusPage.incidents[0]?.resolvedAt).toBeNull();
    const warning = harness.logs
      .slice(logged)
      .find((line) => line.msg === 'status feed items left out');
    expect(warning?.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^components\[0\]\.id left out/),
        expect.stringMatching(/^incidents\[0\]\.incident_updates\[\d+\]/),
      ]),
    );
  });
});

describe('a feed that is not one', () => {
  it('rejects a body that is JSON but not the feed', async () => {
    harness.simulator.setStatusPage('not-a-feed', {
      summary: { hello: 'world' },
      upcoming: [],
    } as unknown as SimulatedFeed);
    const { body } = await harness.execute('{ statusPage(slug: "not-a-feed") { name } }');
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(body.errors?.[0]?.message).toMatch(/does not have the expected shape \(page: /);
  });
});
