import { randomInt } from 'node:crypto';
import { refreshDerivedState, setComponentStatuses } from './status-rollup.js';
import { formatTimestamp, offsetOf } from './timestamp.js';
import type {
  SimulatedFeed,
  StatuspageAffectedComponent,
  StatuspageComponentStatus,
  StatuspageImpact,
  StatuspageIncident,
  StatuspageIncidentStatus,
  StatuspageIncidentUpdate,
  StatuspageMaintenance,
  StatuspageMaintenanceStatus,
} from './types.js';

/*
 * What an operator does on a Statuspage page, and what the feed shows for it: posting an incident
 * or an update to one, and moving a maintenance along. As Statuspage does, each update stamps the
 * event's `updated_at` and the page's, sets the statuses of the components it names (recording
 * them in `affected_components`) with the roll-up that follows, and moves the event between the
 * documents: an incident that is resolved leaves summary.json and stays in incidents.json with its
 * `resolved_at`; a maintenance that starts leaves upcoming.json, one that completes leaves
 * summary.json and stays in scheduled-maintenances.json.
 */

export const STATUSPAGE_INCIDENT_STATUSES: readonly StatuspageIncidentStatus[] = [
  'investigating',
  'identified',
  'monitoring',
  'resolved',
  'postmortem',
];
export const STATUSPAGE_MAINTENANCE_STATUSES: readonly StatuspageMaintenanceStatus[] = [
  'scheduled',
  'in_progress',
  'verifying',
  'completed',
];
export const STATUSPAGE_IMPACTS: readonly StatuspageImpact[] = [
  'none',
  'minor',
  'major',
  'critical',
];

export interface IncidentUpdateInput {
  /** The incident to update; without it, a new incident is posted. */
  readonly id?: string | undefined;
  /** Required for a new incident. */
  readonly name?: string | undefined;
  /** @default 'minor' for a new incident */
  readonly impact?: StatuspageImpact | undefined;
  readonly status: StatuspageIncidentStatus;
  readonly body?: string | undefined;
  /** Component statuses this update sets (leaf components). */
  readonly components?: Readonly<Record<string, StatuspageComponentStatus>> | undefined;
}

export interface MaintenanceUpdateInput {
  /** The maintenance to update; without it, a new maintenance is scheduled. */
  readonly id?: string | undefined;
  /** Required for a new maintenance. */
  readonly name?: string | undefined;
  readonly status: StatuspageMaintenanceStatus;
  readonly body?: string | undefined;
  /** For a new maintenance: the leaf components it affects. */
  readonly componentIds?: readonly string[] | undefined;
  /** For a new maintenance: its window. */
  readonly scheduledFor?: Date | undefined;
  readonly scheduledUntil?: Date | undefined;
}

/**
 * Posts an incident, or an update to one, as Statuspage's incident form does. Throws a RangeError,
 * changing nothing, on an unknown incident or component, or a new incident without a name.
 * Returns the incident's id.
 */
export function postIncidentUpdate(
  feed: SimulatedFeed,
  input: IncidentUpdateInput,
  now: Date = new Date(),
): string {
  const { summary } = feed;
  const history = feed.incidentHistory?.incidents;
  const existing =
    input.id === undefined
      ? undefined
      : (summary.incidents.find((incident) => incident.id === input.id) ??
        history?.find((incident) => incident.id === input.id));
  if (input.id !== undefined && !existing) {
    throw new RangeError(`Unknown incident id ${input.id}`);
  }
  if (!existing && !input.name) throw new RangeError('A new incident needs a name');
  const stamp = stampOf(feed, now);
  const affected = affectedComponents(feed, input.components ?? {});

  const incident: StatuspageIncident = existing ?? {
    ...newEvent(feed, input.name ?? '', input.impact ?? 'minor', stamp),
    status: input.status,
  };
  if (input.name) incident.name = input.name;
  if (input.impact) incident.impact = input.impact;
  incident.status = input.status;
  incident.updated_at = stamp;
  if (input.status === 'monitoring') incident.monitoring_at ??= stamp;
  const over = input.status === 'resolved' || input.status === 'postmortem';
  incident.resolved_at = over ? (incident.resolved_at ?? stamp) : null;
  incident.incident_updates.unshift(
    updateOf(incident.id, input.status, input.body, stamp, affected),
  );
  const listed = new Set(incident.components.map((component) => component.id));
  for (const { code } of affected) {
    const component = summary.components.find((candidate) => candidate.id === code);
    if (component && !listed.has(code)) incident.components.push(structuredClone(component));
  }

  summary.incidents = summary.incidents.filter((candidate) => candidate.id !== incident.id);
  if (!over) summary.incidents.unshift(incident);
  if (history) {
    // One object from now on, wherever it is listed; a new incident is the most recent.
    const index = history.findIndex((candidate) => candidate.id === incident.id);
    if (index >= 0) history[index] = incident;
    else {
      history.unshift(incident);
      history.splice(HISTORY_LENGTH);
    }
  }
  applyStatuses(feed, input.components ?? {}, now);
  return incident.id;
}

/**
 * Schedules a maintenance, or moves one along (`in_progress`, `verifying`, `completed`), as
 * Statuspage does: in progress puts its components under maintenance, completed puts them back
 * to operational. Throws a RangeError, changing nothing, on an unknown maintenance or component.
 * Returns the maintenance's id.
 */
export function postMaintenanceUpdate(
  feed: SimulatedFeed,
  input: MaintenanceUpdateInput,
  now: Date = new Date(),
): string {
  const { summary, upcoming } = feed;
  const history = feed.maintenanceHistory?.scheduled_maintenances;
  const all = [
    ...summary.scheduled_maintenances,
    ...upcoming.scheduled_maintenances,
    ...(history ?? []),
  ];
  const existing = input.id === undefined ? undefined : all.find((m) => m.id === input.id);
  if (input.id !== undefined && !existing) {
    throw new RangeError(`Unknown maintenance id ${input.id}`);
  }
  if (!existing && !input.name) throw new RangeError('A new maintenance needs a name');
  const componentIds = existing
    ? existing.components.map((component) => component.id)
    : (input.componentIds ?? []);
  const components = componentIds.map((id) => {
    const component = summary.components.find((candidate) => candidate.id === id);
    if (!component || component.group) {
      throw new RangeError(`Unknown leaf component id ${id}`);
    }
    return component;
  });
  const stamp = stampOf(feed, now);
  const offset = offsetOf(summary.page.updated_at);
  const target: StatuspageComponentStatus | undefined =
    input.status === 'in_progress'
      ? 'under_maintenance'
      : input.status === 'completed'
        ? 'operational'
        : undefined;
  const statuses = Object.fromEntries(
    target ? components.map((component) => [component.id, target]) : [],
  );
  const affected = affectedComponents(feed, statuses);

  const maintenance: StatuspageMaintenance = existing ?? {
    ...newEvent(feed, input.name ?? '', 'maintenance', stamp),
    status: input.status,
    components: components.map((component) => structuredClone(component)),
    scheduled_for: formatTimestamp(input.scheduledFor ?? new Date(now.getTime() + HOUR_MS), offset),
    scheduled_until: formatTimestamp(
      input.scheduledUntil ?? new Date(now.getTime() + 2 * HOUR_MS),
      offset,
    ),
  };
  maintenance.status = input.status;
  maintenance.updated_at = stamp;
  if (input.status === 'completed') maintenance.resolved_at = stamp;
  maintenance.incident_updates.unshift(
    updateOf(maintenance.id, input.status, input.body, stamp, affected),
  );

  const without = (list: StatuspageMaintenance[]) =>
    list.filter((candidate) => candidate.id !== maintenance.id);
  const byStart = (a: StatuspageMaintenance, b: StatuspageMaintenance) =>
    Date.parse(a.scheduled_for) - Date.parse(b.scheduled_for);
  summary.scheduled_maintenances = without(summary.scheduled_maintenances);
  if (input.status !== 'completed') {
    summary.scheduled_maintenances = [...summary.scheduled_maintenances, maintenance].sort(byStart);
  }
  upcoming.scheduled_maintenances = without(upcoming.scheduled_maintenances);
  if (input.status === 'scheduled') {
    upcoming.scheduled_maintenances = [...upcoming.scheduled_maintenances, maintenance].sort(
      byStart,
    );
  }
  if (history) {
    const kept = without(history);
    history.splice(0, history.length, ...[...kept, maintenance].sort((a, b) => byStart(b, a)));
    history.splice(HISTORY_LENGTH);
  }
  applyStatuses(feed, statuses, now);
  return maintenance.id;
}

/** Statuspage's history documents list the 50 most recent events. */
const HISTORY_LENGTH = 50;
const HOUR_MS = 3_600_000;

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const newId = () => Array.from({ length: 12 }, () => ID_ALPHABET[randomInt(36)]).join('');

/** What a new incident or maintenance starts with, as Statuspage writes it. */
const newEvent = (feed: SimulatedFeed, name: string, impact: StatuspageImpact, stamp: string) => ({
  id: newId(),
  name,
  created_at: stamp,
  updated_at: stamp,
  monitoring_at: null,
  resolved_at: null,
  impact,
  shortlink: `https://stspg.io/${newId()}`,
  started_at: stamp,
  page_id: feed.summary.page.id,
  incident_updates: [],
  components: [],
  reminder_intervals: null,
});

const stampOf = (feed: SimulatedFeed, now: Date) =>
  formatTimestamp(now, offsetOf(feed.summary.page.updated_at));

/** The components an update sets, checked, with their status before and after. */
function affectedComponents(
  feed: SimulatedFeed,
  statuses: Readonly<Record<string, StatuspageComponentStatus>>,
): StatuspageAffectedComponent[] {
  const byId = new Map(feed.summary.components.map((component) => [component.id, component]));
  return Object.entries(statuses).map(([id, status]) => {
    const component = byId.get(id);
    if (!component || component.group) throw new RangeError(`Unknown leaf component id ${id}`);
    const group = component.group_id ? byId.get(component.group_id) : undefined;
    return {
      code: id,
      name: group ? `${group.name} - ${component.name}` : component.name,
      old_status: component.status,
      new_status: status,
    };
  });
}

function updateOf(
  eventId: string,
  status: StatuspageIncidentUpdate['status'],
  body: string | undefined,
  stamp: string,
  affected: StatuspageAffectedComponent[],
): StatuspageIncidentUpdate {
  return {
    id: newId(),
    status,
    body: body ?? '',
    incident_id: eventId,
    created_at: stamp,
    updated_at: stamp,
    display_at: stamp,
    affected_components: affected.length > 0 ? affected : null,
    deliver_notifications: true,
    custom_tweet: null,
    tweet_id: null,
  };
}

/** Sets the components' statuses and the page's `updated_at`, then what follows from them. */
function applyStatuses(
  feed: SimulatedFeed,
  statuses: Readonly<Record<string, StatuspageComponentStatus>>,
  now: Date,
): void {
  if (Object.keys(statuses).length > 0) {
    setComponentStatuses(feed, statuses, now);
    return;
  }
  feed.summary.page.updated_at = stampOf(feed, now);
  refreshDerivedState(feed);
}
