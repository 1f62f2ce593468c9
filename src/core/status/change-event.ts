import type { Component, ComponentStatus, Incident, Maintenance } from './model.js';

/*
 * What changed on the status page, as a provider's diff of two snapshots finds it
 * (`providers/statuspage-v2/status-diff.ts`) and a `ChangeBus` carries it. An event is plain JSON:
 * ids, statuses, kinds, ISO dates, and a detached copy of the entity it is about, so that whoever
 * receives it (this process, or another replica over Redis) can answer it without the snapshot
 * that produced it: a resolved incident is no longer in the summary, yet its subscribers still get
 * it whole.
 */

export const INCIDENT_CHANGE_KINDS = ['CREATED', 'UPDATED', 'RESOLVED'] as const;
export const MAINTENANCE_CHANGE_KINDS = ['SCHEDULED', 'STARTED', 'UPDATED', 'COMPLETED'] as const;
export type IncidentChangeKind = (typeof INCIDENT_CHANGE_KINDS)[number];
export type MaintenanceChangeKind = (typeof MAINTENANCE_CHANGE_KINDS)[number];

/** A value as JSON carries it: dates as ISO strings. */
export type Json<Value> = Value extends Date
  ? string
  : Value extends readonly (infer Item)[]
    ? readonly Json<Item>[]
    : Value extends object
      ? { readonly [Key in keyof Value]: Json<Value[Key]> }
      : Value;

type ComponentLinks = 'group' | 'children' | 'incidents' | 'maintenances';

/** A component without its links into the tree, and the id of its group. */
export type ComponentRecord = Json<Omit<Component, ComponentLinks>> & {
  readonly groupId: string | null;
};
/** An incident or a maintenance, its components as records. */
export type EventRecord<Event extends Incident | Maintenance> = Json<Omit<Event, 'components'>> & {
  readonly components: readonly ComponentRecord[];
};
export type IncidentRecord = EventRecord<Incident>;
export type MaintenanceRecord = EventRecord<Maintenance>;

/** Something on the page changed: its subscribers read the page again. */
export interface PageChangeEvent {
  readonly type: 'page';
  /** The configured page's slug. */
  readonly pageSlug: string;
  readonly pageId: string;
  readonly detectedAt: string;
}

export interface ComponentStatusChangeEvent {
  readonly type: 'component';
  /** The component as the snapshot that changed it lists it. */
  readonly component: ComponentRecord;
  readonly previousStatus: ComponentStatus;
  readonly status: ComponentStatus;
  readonly detectedAt: string;
}

export interface IncidentChangeEvent {
  readonly type: 'incident';
  readonly kind: IncidentChangeKind;
  readonly incident: IncidentRecord;
  readonly detectedAt: string;
}

export interface MaintenanceChangeEvent {
  readonly type: 'maintenance';
  readonly kind: MaintenanceChangeKind;
  readonly maintenance: MaintenanceRecord;
  readonly detectedAt: string;
}

export type StatusChangeEvent =
  | PageChangeEvent
  | ComponentStatusChangeEvent
  | IncidentChangeEvent
  | MaintenanceChangeEvent;

/**
 * One entry per kind of change: a kind left out, or one that is none, does not compile. Every list
 * of kinds is derived from the union it checks: `CHANGE_TYPES` (what another process's event may
 * say), `SHOWN` in `change-evidence.ts` (how each is checked against the stored snapshot) and the
 * GraphQL enums of incident and maintenance kinds (records keyed by `IncidentChangeKind` and
 * `MaintenanceChangeKind`, in `schema/status-event-change.ts`).
 */
const KINDS: Record<StatusChangeEvent['type'], true> = {
  page: true,
  component: true,
  incident: true,
  maintenance: true,
};

/** Every kind of change, as events name it: what another process's event is checked against. */
export const CHANGE_TYPES = Object.keys(KINDS) as [
  StatusChangeEvent['type'],
  ...StatusChangeEvent['type'][],
];

/** The slug of the configured page an event happened on. */
export function pageSlugOf(event: StatusChangeEvent): string {
  switch (event.type) {
    case 'page':
      return event.pageSlug;
    case 'component':
      return event.component.pageSlug;
    case 'incident':
      return event.incident.pageSlug;
    case 'maintenance':
      return event.maintenance.pageSlug;
  }
}

export function componentRecord(component: Component): ComponentRecord {
  const { group, children, incidents, maintenances, ...fields } = component;
  return { ...asJson(fields), groupId: group?.id ?? null };
}

export function eventRecord<Event extends Incident | Maintenance>(
  event: Event,
): EventRecord<Event> {
  const { components, ...fields } = event;
  return asJson({ ...fields, components: components.map(componentRecord) }) as EventRecord<Event>;
}

/** The component of a record, outside any tree: no group, children, incidents or maintenances. */
export function componentOf(record: ComponentRecord): Component {
  const { groupId, ...fields } = record;
  return {
    ...withDates<Omit<Component, ComponentLinks>>(fields),
    group: null,
    children: [],
    incidents: [],
    maintenances: [],
  };
}

export function eventOf<Event extends Incident | Maintenance>(record: EventRecord<Event>): Event {
  return { ...withDates<Event>(record), components: record.components.map(componentOf) };
}

const asJson = <Value>(value: Value): Json<Value> => JSON.parse(JSON.stringify(value));

/** The model's timestamp fields; everything else in a record is already what the model holds. */
const DATE_FIELDS = new Set([
  'createdAt',
  'updatedAt',
  'startedAt',
  'monitoringAt',
  'resolvedAt',
  'displayAt',
  'scheduledFor',
  'scheduledUntil',
]);

/** A record's ISO strings back to Dates, at every depth (an incident's updates have them too). */
function withDates<Value>(record: object): Value {
  return JSON.parse(JSON.stringify(record), (key, value) =>
    DATE_FIELDS.has(key) && typeof value === 'string' ? new Date(value) : value,
  );
}
