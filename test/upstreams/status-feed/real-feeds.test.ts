import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedFeed } from '../../../simulator/src/status-feed/types.js';
import {
  COMPONENT_STATUSES,
  IMPACTS,
  INCIDENT_STATUSES,
  MAINTENANCE_STATUSES,
  STATUS_INDICATORS,
  UPDATE_STATUSES,
} from '../../../src/core/status/model.js';
import { type Harness, startHarness } from '../../helpers/harness.js';
import { statusPagesFile } from '../../helpers/status-pages-file.js';

/*
 * Real Statuspage payloads (test/fixtures/real-feeds), served as the pages served them, and the
 * graph compared with the raw JSON field by field. Every key of the raw documents is accounted
 * for: a key this test does not know fails it, so a field the graph drops cannot go unnoticed.
 */

type Raw = Record<string, unknown>;
const FIXTURES = new URL('../../fixtures/real-feeds/', import.meta.url);
const PAGES = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
const read = (page: string, document: string): Raw | undefined => {
  try {
    return JSON.parse(readFileSync(new URL(`${page}/${document}`, FIXTURES), 'utf8')) as Raw;
  } catch {
    return undefined;
  }
};

/** Raw keys the comparison below checks, by object kind; `page_id` is checked against the page. */
const CHECKED: Record<string, ReadonlySet<string>> = {
  document: new Set(['page', 'status', 'components', 'incidents', 'scheduled_maintenances']),
  page: new Set(['id', 'name', 'url', 'time_zone', 'updated_at']),
  status: new Set(['indicator', 'description']),
  component: new Set([
    ...['id', 'name', 'status', 'description', 'position', 'showcase', 'only_show_if_degraded'],
    ...['group', 'group_id', 'components', 'start_date', 'created_at', 'updated_at', 'page_id'],
  ]),
  event: new Set([
    ...['id', 'name', 'status', 'impact', 'shortlink', 'created_at', 'updated_at', 'started_at'],
    ...['monitoring_at', 'resolved_at', 'reminder_intervals', 'incident_updates', 'components'],
    ...['page_id', 'scheduled_for', 'scheduled_until'],
  ]),
  update: new Set([
    ...['id', 'status', 'body', 'created_at', 'updated_at', 'display_at', 'incident_id'],
    ...['affected_components', 'deliver_notifications', 'tweet_id', 'custom_tweet'],
  ]),
  affected: new Set(['code', 'name', 'old_status', 'new_status']),
};

function expectOnlyCheckedKeys(kind: keyof typeof CHECKED, raw: Raw, where: string) {
  for (const key of Object.keys(raw)) {
    expect(CHECKED[kind]?.has(key), `${where}.${key} is not compared with the graph`).toBe(true);
  }
}

const instant = (value: unknown) =>
  typeof value === 'string' ? new Date(value).toISOString() : null;
const enumOf = (known: readonly string[], value: unknown) => {
  const upper = String(value ?? '').toUpperCase();
  return known.includes(upper) ? upper : 'UNKNOWN';
};
const list = (value: unknown): Raw[] => (Array.isArray(value) ? (value as Raw[]) : []);

const COMPONENT = `id name description status position showcase onlyShowIfDegraded startDate
  createdAt updatedAt isGroup group { id } children { id }`;
const EVENT = `id name impact shortlink createdAt updatedAt startedAt monitoringAt resolvedAt
  reminderIntervals components { id }
  updates { id status body createdAt updatedAt displayAt deliverNotifications tweetId customTweet
    affectedComponents { id name oldStatus newStatus } }`;
const QUERY = `query ($slug: String!) {
  statusPage(slug: $slug) {
    id name url timeZone updatedAt status { indicator description }
    components { ${COMPONENT} }
    incidents { ${EVENT} status }
    scheduledMaintenances { ${EVENT} status scheduledFor scheduledUntil }
    maintenanceHistory { ${EVENT} status scheduledFor scheduledUntil }
  }
}`;

interface Graph {
  statusPage: Raw & {
    components: Raw[];
    incidents: Raw[];
    scheduledMaintenances: Raw[];
    maintenanceHistory: Raw[] | null;
  };
}

function compareEvent(raw: Raw, served: Raw | undefined, pageId: string, where: string) {
  expectOnlyCheckedKeys('event', raw, where);
  const isMaintenance = 'scheduled_for' in raw;
  expect(served, where).toBeDefined();
  if (!served) return;
  const reminders = raw.reminder_intervals;
  expect(served, where).toMatchObject({
    id: raw.id,
    name: raw.name,
    status: enumOf(isMaintenance ? MAINTENANCE_STATUSES : INCIDENT_STATUSES, raw.status),
    impact: enumOf(IMPACTS, raw.impact),
    shortlink: raw.shortlink ?? null,
    createdAt: instant(raw.created_at),
    updatedAt: instant(raw.updated_at),
    startedAt: instant(raw.started_at),
    monitoringAt: instant(raw.monitoring_at),
    resolvedAt: instant(raw.resolved_at),
    reminderIntervals: typeof reminders === 'string' ? JSON.parse(reminders) : (reminders ?? null),
    components: list(raw.components).map((component) => ({ id: component.id })),
    ...(isMaintenance
      ? { scheduledFor: instant(raw.scheduled_for), scheduledUntil: instant(raw.scheduled_until) }
      : {}),
  });
  if (raw.page_id !== undefined) expect(raw.page_id).toBe(pageId);
  const updates = list(raw.incident_updates);
  const servedUpdates = served.updates as Raw[];
  expect(servedUpdates.map((update) => update.id).sort()).toEqual(
    updates.map((update) => update.id).sort(),
  );
  // Newest first, by the time the page shows.
  const shown = servedUpdates.map((update) => Date.parse(String(update.displayAt)));
  expect(shown).toEqual([...shown].sort((a, b) => b - a));
  for (const update of updates) {
    const at = `${where}.incident_updates[${String(update.id)}]`;
    expectOnlyCheckedKeys('update', update, at);
    if (update.incident_id !== undefined) expect(update.incident_id, at).toBe(raw.id);
    const servedUpdate = servedUpdates.find((candidate) => candidate.id === update.id);
    expect(servedUpdate, at).toEqual({
      id: update.id,
      status: enumOf(UPDATE_STATUSES, update.status),
      body: update.body,
      createdAt: instant(update.created_at),
      updatedAt: instant(update.updated_at),
      displayAt: instant(update.display_at ?? update.created_at),
      deliverNotifications: update.deliver_notifications ?? null,
      tweetId:
        update.tweet_id === undefined || update.tweet_id === null ? null : String(update.tweet_id),
      customTweet: update.custom_tweet ?? null,
      affectedComponents: list(update.affected_components).map((affected) => {
        expectOnlyCheckedKeys('affected', affected, `${at}.affected_components`);
        return {
          id: affected.code,
          name: affected.name ?? null,
          oldStatus: enumOf(COMPONENT_STATUSES, affected.old_status),
          newStatus: enumOf(COMPONENT_STATUSES, affected.new_status),
        };
      }),
    });
  }
}

/** The captured documents of page `name`, served as the page served them. */
function feedOf(name: string): SimulatedFeed {
  const summary = read(name, 'summary.json') as Raw;
  // Only claude's capture has a maintenance list, and it is really scheduled-maintenances.json.
  const maintenanceHistory = read(name, 'upcoming.json');
  const scheduled = list(summary.scheduled_maintenances);
  return {
    summary,
    // As real Statuspage derives it: the summary's maintenances that have not started yet.
    upcoming: {
      page: summary.page,
      scheduled_maintenances: scheduled.filter((m) => m.status === 'scheduled'),
    },
    ...(maintenanceHistory ? { maintenanceHistory } : {}),
  } as unknown as SimulatedFeed;
}

/** One gateway for the file, every real page a page of it, each at its simulator page. */
let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({
    simulator: { statusPages: Object.fromEntries(PAGES.map((name) => [name, feedOf(name)])) },
    env: (simulator) => ({
      STATUS_PAGES_FILE: statusPagesFile(
        PAGES.map((name) => ({ slug: name, baseUrl: simulator.statusPageUrl(name) })),
      ),
    }),
    logLevel: 'warn',
  });
});
afterAll(() => harness.close());

describe.each(PAGES)('the real %s page', (name) => {
  const summary = read(name, 'summary.json') as Raw;
  const maintenanceHistory = read(name, 'upcoming.json');
  let graph: Graph;
  let errors: readonly { path?: readonly unknown[]; message: string }[];
  /** What the gateway logged while it read the page. */
  let logs: Record<string, unknown>[];

  beforeAll(async () => {
    const logged = harness.logs.length;
    const { body } = await harness.execute<Graph>(QUERY, { slug: name });
    logs = harness.logs.slice(logged);
    graph = body.data as Graph;
    errors = body.errors ?? [];
  });

  it('answers with every document it has, and an error naming only the one it lacks', () => {
    expect(graph.statusPage.id).toBe((summary.page as Raw).id);
    if (maintenanceHistory) {
      expect(errors).toEqual([]);
      expect(graph.statusPage.maintenanceHistory).not.toBeNull();
    } else {
      expect(graph.statusPage.maintenanceHistory).toBeNull();
      expect(errors.map((error) => error.path)).toEqual([['statusPage', 'maintenanceHistory']]);
      expect(errors[0]?.message).toContain('GET /scheduled-maintenances.json');
    }
    expect(logs.filter((line) => line.msg === 'status feed items left out')).toEqual([]);
  });

  it('serves the page and its status as the page does', () => {
    expectOnlyCheckedKeys('document', summary, 'summary');
    const page = summary.page as Raw;
    const status = summary.status as Raw;
    expectOnlyCheckedKeys('page', page, 'page');
    expectOnlyCheckedKeys('status', status, 'status');
    expect(graph.statusPage).toMatchObject({
      id: page.id,
      name: page.name,
      url: page.url,
      timeZone: page.time_zone ?? null,
      updatedAt: instant(page.updated_at),
      status: {
        indicator: enumOf(STATUS_INDICATORS, status.indicator),
        description: status.description,
      },
    });
  });

  it('serves every component with every field, in the tree the page draws', () => {
    const raw = list(summary.components);
    const served = new Map(graph.statusPage.components.map((c) => [c.id, c]));
    expect(graph.statusPage.components).toHaveLength(raw.length);
    const pageId = (summary.page as Raw).id;
    const ids = new Set(raw.map((component) => component.id));
    for (const component of raw) {
      const where = `components[${String(component.id)}]`;
      expectOnlyCheckedKeys('component', component, where);
      expect(component.page_id, where).toBe(pageId);
      const groupId = typeof component.group_id === 'string' ? component.group_id : null;
      const children = list(raw).filter((other) => other.group_id === component.id);
      expect(served.get(component.id as string), where).toEqual({
        id: component.id,
        name: component.name,
        description: component.description ?? null,
        status: enumOf(COMPONENT_STATUSES, component.status),
        position: component.position,
        showcase: component.showcase ?? false,
        onlyShowIfDegraded: component.only_show_if_degraded ?? false,
        // A calendar date, exactly as written: never shifted by a time zone.
        startDate: component.start_date ?? null,
        createdAt: instant(component.created_at),
        updatedAt: instant(component.updated_at),
        isGroup: component.group === true || children.length > 0,
        group: groupId && ids.has(groupId) ? { id: groupId } : null,
        children: expect.arrayContaining(children.map((child) => ({ id: child.id }))),
      });
      if (Array.isArray(component.components)) {
        expect(
          ((served.get(component.id as string)?.children ?? []) as Raw[])
            .map((child) => child.id)
            .sort(),
          `${where}.components`,
        ).toEqual([...(component.components as string[])].sort());
      }
    }
  });

  it('serves every incident and maintenance, and every update, field by field', () => {
    const pageId = String((summary.page as Raw).id);
    const byId = (events: Raw[]) => new Map(events.map((event) => [event.id, event]));
    const incidents = byId(graph.statusPage.incidents);
    const maintenances = byId(graph.statusPage.scheduledMaintenances);
    expect(incidents.size).toBe(list(summary.incidents).length);
    expect(maintenances.size).toBe(list(summary.scheduled_maintenances).length);
    for (const incident of list(summary.incidents)) {
      compareEvent(
        incident,
        incidents.get(incident.id),
        pageId,
        `incidents[${String(incident.id)}]`,
      );
    }
    for (const maintenance of list(summary.scheduled_maintenances)) {
      const where = `scheduled_maintenances[${String(maintenance.id)}]`;
      compareEvent(maintenance, maintenances.get(maintenance.id), pageId, where);
    }
    if (maintenanceHistory) {
      const history = byId(graph.statusPage.maintenanceHistory ?? []);
      const raw = list(maintenanceHistory.scheduled_maintenances);
      expect(history.size).toBe(raw.length);
      for (const maintenance of raw) {
        const where = `history.scheduled_maintenances[${String(maintenance.id)}]`;
        compareEvent(maintenance, history.get(maintenance.id), pageId, where);
      }
    }
  });
});
