import {
  componentRecord,
  eventRecord,
  type IncidentChangeKind,
  type MaintenanceChangeKind,
  type StatusChangeEvent,
} from '../../core/status/change-event.js';
import type { FeedSnapshots } from '../../core/status/feed-document.js';
import type {
  Component,
  EventHistory,
  Incident,
  IncidentHistory,
  Maintenance,
  MaintenanceHistory,
  StatusEvent,
  StatusSummary,
  UpcomingMaintenances,
} from '../../core/status/model.js';

/*
 * Change detection: pure functions of two successive snapshots of one feed document (and the
 * current snapshots of the others, where one document confirms what another shows) to the list
 * of changes between them. They run once per upstream load (`SnapshotCache`'s `onLoaded`), so an
 * event is found once, however many read the feed; a failed refetch or a stale stand-in is no
 * load and finds nothing.
 *
 * Each change is reported by exactly one document, whichever load completes it:
 * - an incident that leaves the summary's unresolved list is RESOLVED, with its resolved copy
 *   from the incident history (`incidents.json`). When the history on hand lists it unresolved,
 *   or does not list it yet, the history's next load reports it. When the history never will
 *   (the feed serves none, or it holds only the 50 most recent incidents and this one is older),
 *   the summary reports it at once with the last copy it had; so does a history that loses an
 *   unresolved incident the summary no longer lists;
 * - a maintenance that leaves the summary is COMPLETED the same way, confirmed by the maintenance
 *   history; a new one is SCHEDULED by whichever of the summary and the upcoming list shows it
 *   first; every other change of a maintenance the summary lists is the summary's to report.
 */

type Others<Document extends keyof FeedSnapshots> = Omit<FeedSnapshots, Document>;

export function summaryChanges(
  previous: StatusSummary,
  next: StatusSummary,
  detectedAt: Date,
  others: Others<'summary'> = {},
): StatusChangeEvent[] {
  const at = detectedAt.toISOString();
  const events: StatusChangeEvent[] = [];

  for (const component of next.components) {
    const before = previous.componentsById.get(component.id);
    if (before && before.status !== component.status) {
      events.push({
        type: 'component',
        component: componentRecord(component),
        previousStatus: before.status,
        status: component.status,
        detectedAt: at,
      });
    }
  }

  for (const current of next.incidents) {
    const before = previous.incidentsById.get(current.id);
    if (!before) events.push(incidentEvent('CREATED', current, at));
    else if (!sameEvent(before, current)) events.push(incidentEvent('UPDATED', current, at));
  }
  for (const gone of previous.incidents) {
    if (next.incidentsById.has(gone.id)) continue;
    const history = others.incidentHistory;
    const listed = history?.eventsById.get(gone.id);
    if (listed) {
      if (isResolved(listed)) events.push(incidentEvent('RESOLVED', listed, at));
    } else if (!history || isBeyond(history, gone)) {
      events.push(incidentEvent('RESOLVED', gone, at));
    }
  }

  for (const current of next.maintenances) {
    const before = previous.maintenancesById.get(current.id);
    const kind = maintenanceChangeKind(before, current, others.upcoming);
    if (kind) events.push(maintenanceEvent(kind, current, at));
  }
  for (const gone of previous.maintenances) {
    if (next.maintenancesById.has(gone.id) || gone.status === 'COMPLETED') continue;
    if (others.upcoming?.maintenancesById.has(gone.id)) continue;
    const history = others.maintenanceHistory;
    const listed = history?.eventsById.get(gone.id);
    if (listed) {
      if (isCompleted(listed)) events.push(maintenanceEvent('COMPLETED', listed, at));
    } else if (!history || isBeyond(history, gone)) {
      if (gone.status !== 'SCHEDULED') events.push(maintenanceEvent('COMPLETED', gone, at));
    }
  }

  return withPageEvent(events, !samePage(previous, next), next, at);
}

export function upcomingChanges(
  previous: UpcomingMaintenances,
  next: UpcomingMaintenances,
  detectedAt: Date,
  others: Others<'upcoming'> = {},
): StatusChangeEvent[] {
  const at = detectedAt.toISOString();
  const events: StatusChangeEvent[] = [];
  for (const current of next.maintenances) {
    // What the summary lists is the summary's to report.
    if (others.summary?.maintenancesById.has(current.id)) continue;
    const before = previous.maintenancesById.get(current.id);
    const kind = maintenanceChangeKind(before, current, others.summary);
    if (kind) events.push(maintenanceEvent(kind, current, at));
  }
  return withPageEvent(events, !sameEvents(previous.maintenances, next.maintenances), next, at);
}

export function incidentHistoryChanges(
  previous: IncidentHistory,
  next: IncidentHistory,
  detectedAt: Date,
  others: Others<'incidentHistory'> = {},
): StatusChangeEvent[] {
  const at = detectedAt.toISOString();
  const events = [
    ...newlyOver(previous, next, isResolved, others.summary?.incidentsById),
    ...lostOpen(previous, next, isResolved, others.summary?.incidentsById),
  ].map((incident) => incidentEvent('RESOLVED', incident, at));
  return withPageEvent(events, !sameEvents(previous.events, next.events), next, at);
}

export function maintenanceHistoryChanges(
  previous: MaintenanceHistory,
  next: MaintenanceHistory,
  detectedAt: Date,
  others: Others<'maintenanceHistory'> = {},
): StatusChangeEvent[] {
  const at = detectedAt.toISOString();
  const listed = (id: string) =>
    others.summary?.maintenancesById.has(id) || others.upcoming?.maintenancesById.has(id);
  const lost = lostOpen(previous, next, isCompleted, others.summary?.maintenancesById).filter(
    (maintenance) => maintenance.status !== 'SCHEDULED' && !listed(maintenance.id),
  );
  const events = [
    ...newlyOver(previous, next, isCompleted, others.summary?.maintenancesById),
    ...lost,
  ].map((maintenance) => maintenanceEvent('COMPLETED', maintenance, at));
  return withPageEvent(events, !sameEvents(previous.events, next.events), next, at);
}

/**
 * The events a history shows over (resolved, completed) that its previous copy did not, and that
 * the summary on hand no longer lists: while it still does, the summary reports them once it lets
 * them go.
 */
function newlyOver<Event extends StatusEvent>(
  previous: EventHistory<Event>,
  next: EventHistory<Event>,
  isOver: (event: Event) => boolean,
  listed: ReadonlyMap<string, unknown> | undefined,
): Event[] {
  return next.events.filter((event) => {
    const before = previous.eventsById.get(event.id);
    return isOver(event) && !(before && isOver(before)) && !listed?.has(event.id);
  });
}

/**
 * The events the previous history listed not over that the next one does not list at all (pushed
 * out of its 50 by newer ones), with their last copy, when the summary on hand no longer lists them
 * either: the summary let them go while the history still listed them, and left them to it.
 */
function lostOpen<Event extends StatusEvent>(
  previous: EventHistory<Event>,
  next: EventHistory<Event>,
  isOver: (event: Event) => boolean,
  listed: ReadonlyMap<string, unknown> | undefined,
): Event[] {
  // Without a summary on hand, nothing says it let them go.
  if (!listed) return [];
  return previous.events.filter(
    (event) => !isOver(event) && !next.eventsById.has(event.id) && !listed.has(event.id),
  );
}

/**
 * Whether a history that does not list `event` never will: the event already existed when the
 * history was written (it is no newer than the page's last update or an event the history lists),
 * and a history keeps only the most recent events (the 50 last created), so it is older than all
 * of them. An event newer than the history is still to come in its next load.
 */
function isBeyond(history: EventHistory<StatusEvent>, event: StatusEvent): boolean {
  const created = event.createdAt.getTime();
  return (
    created <= history.page.updatedAt.getTime() ||
    history.events.some((listed) => listed.createdAt.getTime() >= created)
  );
}

const isResolved = (incident: Incident) =>
  incident.status === 'RESOLVED' || incident.status === 'POSTMORTEM';
const isCompleted = (maintenance: Maintenance) => maintenance.status === 'COMPLETED';

/**
 * What changed of a maintenance since `before`. One seen for the first time is SCHEDULED unless
 * `elsewhere` already listed it.
 */
function maintenanceChangeKind(
  before: Maintenance | undefined,
  after: Maintenance,
  elsewhere: { readonly maintenancesById: ReadonlyMap<string, Maintenance> } | undefined,
): MaintenanceChangeKind | undefined {
  if (!before) {
    switch (after.status) {
      case 'SCHEDULED':
        return elsewhere?.maintenancesById.has(after.id) ? undefined : 'SCHEDULED';
      case 'COMPLETED':
        return 'COMPLETED';
      case 'IN_PROGRESS':
      case 'VERIFYING':
        return 'STARTED';
      default:
        return 'UPDATED';
    }
  }
  if (before.status !== after.status) {
    if (after.status === 'COMPLETED') return 'COMPLETED';
    if (after.status === 'IN_PROGRESS' && before.status === 'SCHEDULED') return 'STARTED';
    return 'UPDATED';
  }
  return sameEvent(before, after) ? undefined : 'UPDATED';
}

const incidentEvent = (
  kind: IncidentChangeKind,
  incident: Incident,
  detectedAt: string,
): StatusChangeEvent => ({
  type: 'incident',
  kind,
  incident: eventRecord(incident),
  detectedAt,
});

const maintenanceEvent = (
  kind: MaintenanceChangeKind,
  maintenance: Maintenance,
  detectedAt: string,
): StatusChangeEvent => ({
  type: 'maintenance',
  kind,
  maintenance: eventRecord(maintenance),
  detectedAt,
});

function withPageEvent(
  events: StatusChangeEvent[],
  listChanged: boolean,
  next: { readonly page: { readonly id: string; readonly slug: string } },
  at: string,
): StatusChangeEvent[] {
  if (events.length > 0 || listChanged) {
    events.unshift({
      type: 'page',
      pageSlug: next.page.slug,
      pageId: next.page.id,
      detectedAt: at,
    });
  }
  return events;
}

const time = (date: Date | null) => date?.getTime() ?? null;

/** Whether an incident or maintenance says the same in both snapshots. */
function sameEvent(a: StatusEvent, b: StatusEvent): boolean {
  return (
    a.id === b.id &&
    time(a.updatedAt) === time(b.updatedAt) &&
    time(a.resolvedAt) === time(b.resolvedAt) &&
    (a as Incident).status === (b as Incident).status &&
    a.impact === b.impact &&
    a.name === b.name &&
    a.updates.length === b.updates.length &&
    a.updates[0]?.id === b.updates[0]?.id &&
    a.updates[0]?.body === b.updates[0]?.body &&
    time((a as Partial<Maintenance>).scheduledFor ?? null) ===
      time((b as Partial<Maintenance>).scheduledFor ?? null) &&
    time((a as Partial<Maintenance>).scheduledUntil ?? null) ===
      time((b as Partial<Maintenance>).scheduledUntil ?? null) &&
    a.components.map((c) => c.id).join() === b.components.map((c) => c.id).join()
  );
}

/** Whether two lists hold the same items in the same order, each compared by `same`. */
const sameList = <Item>(
  a: readonly Item[],
  b: readonly Item[],
  same: (a: Item, b: Item) => boolean,
) => a.length === b.length && a.every((item, i) => same(item, b[i] as Item));

const sameEvents = (a: readonly StatusEvent[], b: readonly StatusEvent[]) =>
  sameList(a, b, sameEvent);

function sameComponent(a: Component, b: Component): boolean {
  return (
    a.id === b.id &&
    a.status === b.status &&
    a.name === b.name &&
    a.description === b.description &&
    a.position === b.position &&
    a.showcase === b.showcase &&
    a.onlyShowIfDegraded === b.onlyShowIfDegraded &&
    a.startDate === b.startDate &&
    time(a.updatedAt) === time(b.updatedAt) &&
    a.group?.id === b.group?.id
  );
}

/** Whether the summary shows the same page: its header, banner, components and events. */
function samePage(a: StatusSummary, b: StatusSummary): boolean {
  return (
    a.page.id === b.page.id &&
    a.page.name === b.page.name &&
    a.page.url === b.page.url &&
    a.page.timeZone === b.page.timeZone &&
    time(a.page.updatedAt) === time(b.page.updatedAt) &&
    a.status.indicator === b.status.indicator &&
    a.status.description === b.status.description &&
    sameList(a.components, b.components, sameComponent) &&
    sameEvents(a.incidents, b.incidents) &&
    sameEvents(a.maintenances, b.maintenances)
  );
}
