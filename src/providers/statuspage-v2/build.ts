import type { z } from 'zod';
import { toEnumValue } from '../../core/enum-value.js';
import type { Built } from '../../core/status/feed-document.js';
import {
  type AffectedComponent,
  COMPONENT_STATUSES,
  type Component,
  DEFAULT_PAGE_SLUG,
  type EventHistory,
  type FeedPage,
  IMPACTS,
  INCIDENT_STATUSES,
  type Incident,
  type IncidentHistory,
  type IncidentUpdate,
  MAINTENANCE_STATUSES,
  type Maintenance,
  type MaintenanceHistory,
  type Page,
  STATUS_INDICATORS,
  type StatusEvent,
  type StatusSummary,
  UPDATE_STATUSES,
  type UpcomingMaintenances,
} from '../../core/status/model.js';
import {
  WireAffectedComponent,
  WireComponent,
  WireIncident,
  type WireIncidentHistory,
  WireIncidentUpdate,
  WireMaintenance,
  type WirePage,
  type WireSummary,
  type WireUpcoming,
} from './wire.js';

/** A document built outside any configuration (tests, tools) belongs to the default page. */
const ANY_PAGE: FeedPage = { slug: DEFAULT_PAGE_SLUG };

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer I)[] ? I[] : T[K] };

export function buildSummary(wire: WireSummary, page: FeedPage = ANY_PAGE): Built<StatusSummary> {
  const problems: string[] = [];
  const components = parseList(wire.components, WireComponent, 'components', problems, (item) =>
    toComponent(item, page),
  ).sort(byPosition);
  const componentsById = new Map(components.map((component) => [component.id, component]));

  for (const component of components) {
    const group = component.groupId === null ? undefined : componentsById.get(component.groupId);
    // Statuspage groups are one level deep; linking only to a top-level group also keeps a
    // malformed feed from making a cycle.
    if (group && group !== component && group.groupId === null) {
      component.group = group;
      group.children.push(component);
      group.isGroup = true;
    }
  }

  const incidents = toIncidents(wire.incidents, problems, page);
  const maintenances = toMaintenances(wire.scheduled_maintenances, problems, page);

  for (const event of [...incidents, ...maintenances]) {
    event.components = event.components.map((listed) => {
      const node = componentsById.get(listed.id);
      if ('scheduledFor' in event) node?.maintenances.push(event);
      else node?.incidents.push(event);
      return node ?? listed;
    });
  }

  return {
    snapshot: {
      page: toPage(wire.page, page),
      status: {
        indicator: toEnumValue(STATUS_INDICATORS, wire.status.indicator),
        description: wire.status.description ?? '',
      },
      components,
      topLevelComponents: components.filter((component) => component.group === null),
      componentsById,
      incidents,
      incidentsById: new Map(incidents.map((incident) => [incident.id, incident])),
      maintenances,
      maintenancesById: new Map(maintenances.map((maintenance) => [maintenance.id, maintenance])),
    },
    problems,
  };
}

export function buildIncidentHistory(
  wire: WireIncidentHistory,
  page: FeedPage = ANY_PAGE,
): Built<IncidentHistory> {
  const problems: string[] = [];
  const incidents = toIncidents(wire.incidents, problems, page);
  return { snapshot: toHistory(wire.page, incidents, page), problems };
}

export function buildMaintenanceHistory(
  wire: WireUpcoming,
  page: FeedPage = ANY_PAGE,
): Built<MaintenanceHistory> {
  const problems: string[] = [];
  const maintenances = toMaintenances(wire.scheduled_maintenances, problems, page);
  return { snapshot: toHistory(wire.page, maintenances, page), problems };
}

function toHistory<Event extends StatusEvent>(
  wirePage: WirePage,
  events: readonly Event[],
  page: FeedPage,
): EventHistory<Event> {
  const eventsByComponentId = new Map<string, Event[]>();
  for (const event of events) {
    for (const { id } of event.components) {
      const listed = eventsByComponentId.get(id);
      if (listed) listed.push(event);
      else eventsByComponentId.set(id, [event]);
    }
  }
  return {
    page: toPage(wirePage, page),
    events,
    eventsById: new Map(events.map((event) => [event.id, event])),
    eventsByComponentId,
  };
}

export function buildUpcoming(
  wire: WireUpcoming,
  page: FeedPage = ANY_PAGE,
): Built<UpcomingMaintenances> {
  const problems: string[] = [];
  const maintenances = toMaintenances(wire.scheduled_maintenances, problems, page);
  return {
    snapshot: {
      page: toPage(wire.page, page),
      maintenances,
      maintenancesById: new Map(maintenances.map((maintenance) => [maintenance.id, maintenance])),
    },
    problems,
  };
}

const toIncidents = (items: readonly unknown[], problems: string[], page: FeedPage) =>
  parseList(
    items,
    WireIncident,
    'incidents',
    problems,
    (wire, where): Mutable<Incident> => ({
      ...toEvent(wire, where, problems, page),
      status: toEnumValue(INCIDENT_STATUSES, wire.status),
    }),
  );

const toMaintenances = (items: readonly unknown[], problems: string[], page: FeedPage) =>
  parseList(
    items,
    WireMaintenance,
    'scheduled_maintenances',
    problems,
    (wire, where): Mutable<Maintenance> => ({
      ...toEvent(wire, where, problems, page),
      status: toEnumValue(MAINTENANCE_STATUSES, wire.status),
      scheduledFor: wire.scheduled_for,
      scheduledUntil: wire.scheduled_until,
    }),
  );

/**
 * The items of a feed list that pass `schema`, each built with its place in the list (`where`,
 * for the problems it reports). Items that fail are left out one by one, and so are repeats of an
 * id: a feed that lists one thing twice (or 20,000 times) describes it once, so that nothing in
 * the graph multiplies with them. Each is described in `problems`, for the caller to log.
 */
function parseList<Wire, Item>(
  items: readonly unknown[],
  schema: z.ZodType<Wire>,
  where: string,
  problems: string[],
  build: (wire: Wire, where: string) => Item,
  idOf: (wire: Wire) => string = (wire) => (wire as { id: string }).id,
): Item[] {
  const byId = new Map<string, Wire>();
  let repeats = 0;
  items.forEach((item, index) => {
    const parsed = schema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const at = issue?.path.length ? `.${issue.path.join('.')}` : '';
      problems.push(`${where}[${index}]${at} left out: ${issue?.message ?? 'invalid'}`);
    } else if (byId.has(idOf(parsed.data))) repeats += 1;
    else byId.set(idOf(parsed.data), parsed.data);
  });
  if (repeats > 0) problems.push(`${where}: ${repeats} repeated ids left out`);
  return [...byId.values()].map((wire, i) => build(wire, `${where}[${i}]`));
}

const byPosition = (a: Component, b: Component) =>
  a.position - b.position || a.name.localeCompare(b.name);

function toPage(wire: WirePage, page: FeedPage): Page {
  return {
    slug: page.slug,
    id: wire.id,
    name: wire.name,
    url: wire.url,
    timeZone: wire.time_zone,
    updatedAt: wire.updated_at,
  };
}

type ComponentNode = Mutable<Component> & { groupId: string | null };

function toComponent(wire: WireComponent, page: FeedPage): ComponentNode {
  return {
    pageSlug: page.slug,
    id: wire.id,
    name: wire.name,
    version: page.versionPattern?.exec(wire.name)?.[1] ?? null,
    description: wire.description,
    status: toEnumValue(COMPONENT_STATUSES, wire.status),
    position: wire.position,
    showcase: wire.showcase,
    onlyShowIfDegraded: wire.only_show_if_degraded,
    startDate: wire.start_date,
    createdAt: wire.created_at,
    updatedAt: wire.updated_at,
    isGroup: wire.group,
    groupId: wire.group_id,
    group: null,
    children: [],
    incidents: [],
    maintenances: [],
  };
}

function toEvent(
  wire: WireIncident,
  where: string,
  problems: string[],
  page: FeedPage,
): Mutable<StatusEvent> {
  const updates = parseList(
    wire.incident_updates,
    WireIncidentUpdate,
    `${where}.incident_updates`,
    problems,
    (update, at) => toUpdate(update, at, problems),
  ).sort((a, b) => b.displayAt.getTime() - a.displayAt.getTime());
  return {
    pageSlug: page.slug,
    id: wire.id,
    name: wire.name,
    impact: toEnumValue(IMPACTS, wire.impact),
    shortlink: wire.shortlink,
    createdAt: wire.created_at,
    updatedAt: wire.updated_at,
    startedAt: wire.started_at,
    monitoringAt: wire.monitoring_at,
    resolvedAt: wire.resolved_at,
    reminderIntervals: wire.reminder_intervals,
    updates,
    components: parseList(wire.components, WireComponent, `${where}.components`, problems, (item) =>
      toComponent(item, page),
    ),
  };
}

function toUpdate(wire: WireIncidentUpdate, where: string, problems: string[]): IncidentUpdate {
  return {
    id: wire.id,
    status: toEnumValue(UPDATE_STATUSES, wire.status),
    body: wire.body ?? '',
    createdAt: wire.created_at,
    updatedAt: wire.updated_at,
    displayAt: wire.display_at ?? wire.created_at,
    affectedComponents: parseList(
      wire.affected_components,
      WireAffectedComponent,
      `${where}.affected_components`,
      problems,
      toAffectedComponent,
      (affected) => affected.code,
    ),
    deliverNotifications: wire.deliver_notifications,
    tweetId: wire.tweet_id,
    customTweet: wire.custom_tweet,
  };
}

function toAffectedComponent(wire: WireAffectedComponent): AffectedComponent {
  return {
    id: wire.code,
    name: wire.name,
    oldStatus: toEnumValue(COMPONENT_STATUSES, wire.old_status),
    newStatus: toEnumValue(COMPONENT_STATUSES, wire.new_status),
  };
}
