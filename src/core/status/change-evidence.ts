import {
  componentRecord,
  eventRecord,
  INCIDENT_CHANGE_KINDS,
  MAINTENANCE_CHANGE_KINDS,
  type StatusChangeEvent,
} from './change-event.js';
import {
  COMPONENT_STATUSES,
  type Component,
  type ComponentStatus,
  type Incident,
  type Maintenance,
} from './model.js';

/** A component's status as a replica reports it: a value this gateway does not know is `UNKNOWN`. */
const RECEIVED_STATUSES: readonly ComponentStatus[] = [...COMPONENT_STATUSES, 'UNKNOWN'];

/** The lookups of the feed's documents (summary, upcoming, histories) an event is found in. */
interface DocumentValue {
  readonly page?: { readonly id: string; readonly slug: string };
  readonly componentsById?: ReadonlyMap<string, Component>;
  readonly incidentsById?: ReadonlyMap<string, Incident>;
  readonly maintenancesById?: ReadonlyMap<string, Maintenance>;
  readonly eventsById?: ReadonlyMap<string, Incident | Maintenance>;
}

/** A change event as received from another replica: checked for nothing yet. */
export interface ReceivedEvent {
  readonly type: StatusChangeEvent['type'];
  readonly detectedAt: string;
  readonly [field: string]: unknown;
}

/**
 * A change event another replica published, as this replica's snapshots show it: rebuilt from the
 * document's snapshot it was found in (`next`), or, for something that left the document (a
 * resolved incident, a completed maintenance), from the snapshot before it (`previous`), and only
 * when the received event says the same word for word. `undefined` when it does not: an event
 * carries text to every subscriber, and only text the replicas stored as the upstream's, validated,
 * is passed on, whatever else was published on the channel.
 */
export function shownEvent(
  event: ReceivedEvent,
  next: unknown,
  previous: unknown,
): StatusChangeEvent | undefined {
  if (!isDocumentValue(next) || !Object.hasOwn(SHOWN, event.type)) return undefined;
  return SHOWN[event.type](event, next, isDocumentValue(previous) ? previous : undefined);
}

/**
 * How each kind of change is found again in the stored snapshots: one entry per kind of
 * `StatusChangeEvent` (`KINDS`), so that a kind without one does not compile; a kind another
 * replica accepts on arrival (`CHANGE_TYPES`) is always one this replica can check.
 */
const SHOWN: {
  readonly [Type in StatusChangeEvent['type']]: (
    event: ReceivedEvent,
    next: DocumentValue,
    previous: DocumentValue | undefined,
  ) => Extract<StatusChangeEvent, { type: Type }> | undefined;
} = {
  // The page is the document's own (its name carries the slug), whatever the message says.
  page: ({ pageId, detectedAt }, next) =>
    next.page !== undefined && next.page.id === pageId
      ? { type: 'page', pageSlug: next.page.slug, pageId: next.page.id, detectedAt }
      : undefined,
  component: (event, next, previous) => {
    const received = event.component as { id?: unknown } | undefined;
    const id = typeof received?.id === 'string' ? received.id : undefined;
    const component = id === undefined ? undefined : next.componentsById?.get(id);
    if (!component || component.status !== event.status) return undefined;
    const record = componentRecord(component);
    if (!sameJson(record, received)) return undefined;
    const before = previous?.componentsById?.get(component.id);
    const previousStatus = before
      ? before.status
      : RECEIVED_STATUSES.find((status) => status === event.previousStatus);
    if (previousStatus === undefined || previousStatus !== event.previousStatus) return undefined;
    if (previousStatus === component.status) return undefined;
    return {
      type: 'component',
      component: record,
      previousStatus,
      status: component.status,
      detectedAt: event.detectedAt,
    };
  },
  incident: (event, next, previous) => {
    const kind = INCIDENT_CHANGE_KINDS.find((candidate) => candidate === event.kind);
    const received = event.incident as { id?: unknown } | undefined;
    if (!kind || typeof received?.id !== 'string') return undefined;
    const id = received.id;
    for (const document of previous ? [next, previous] : [next]) {
      const found = document.incidentsById?.get(id) ?? document.eventsById?.get(id);
      if (!found || 'scheduledFor' in found) continue;
      const record = eventRecord(found);
      if (sameJson(record, received)) {
        return { type: 'incident', kind, incident: record, detectedAt: event.detectedAt };
      }
    }
    return undefined;
  },
  maintenance: (event, next, previous) => {
    const kind = MAINTENANCE_CHANGE_KINDS.find((candidate) => candidate === event.kind);
    const received = event.maintenance as { id?: unknown } | undefined;
    if (!kind || typeof received?.id !== 'string') return undefined;
    const id = received.id;
    for (const document of previous ? [next, previous] : [next]) {
      const found = document.maintenancesById?.get(id) ?? document.eventsById?.get(id);
      if (!found || !('scheduledFor' in found)) continue;
      const record = eventRecord(found);
      if (sameJson(record, received)) {
        return { type: 'maintenance', kind, maintenance: record, detectedAt: event.detectedAt };
      }
    }
    return undefined;
  },
};

function isDocumentValue(value: unknown): value is DocumentValue {
  return typeof value === 'object' && value !== null;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
