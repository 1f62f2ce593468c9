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
  if (!isDocumentValue(next)) return undefined;
  const documents = isDocumentValue(previous) ? [next, previous] : [next];
  const { detectedAt } = event;
  switch (event.type) {
    case 'page':
      // The page is the document's own (its name carries the slug), whatever the message says.
      return next.page !== undefined && next.page.id === event.pageId
        ? { type: 'page', pageSlug: next.page.slug, pageId: next.page.id, detectedAt }
        : undefined;
    case 'component': {
      const received = event.component as { id?: unknown } | undefined;
      const id = typeof received?.id === 'string' ? received.id : undefined;
      const component = id === undefined ? undefined : next.componentsById?.get(id);
      if (!component || component.status !== event.status) return undefined;
      const record = componentRecord(component);
      if (!sameJson(record, received)) return undefined;
      const before = isDocumentValue(previous)
        ? previous.componentsById?.get(component.id)
        : undefined;
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
        detectedAt,
      };
    }
    case 'incident': {
      const kind = INCIDENT_CHANGE_KINDS.find((candidate) => candidate === event.kind);
      const received = event.incident as { id?: unknown } | undefined;
      if (!kind || typeof received?.id !== 'string') return undefined;
      const id = received.id;
      for (const document of documents) {
        const found = document.incidentsById?.get(id) ?? document.eventsById?.get(id);
        if (!found || 'scheduledFor' in found) continue;
        const record = eventRecord(found);
        if (sameJson(record, received))
          return { type: 'incident', kind, incident: record, detectedAt };
      }
      return undefined;
    }
    case 'maintenance': {
      const kind = MAINTENANCE_CHANGE_KINDS.find((candidate) => candidate === event.kind);
      const received = event.maintenance as { id?: unknown } | undefined;
      if (!kind || typeof received?.id !== 'string') return undefined;
      const id = received.id;
      for (const document of documents) {
        const found = document.maintenancesById?.get(id) ?? document.eventsById?.get(id);
        if (!found || !('scheduledFor' in found)) continue;
        const record = eventRecord(found);
        if (sameJson(record, received)) {
          return { type: 'maintenance', kind, maintenance: record, detectedAt };
        }
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function isDocumentValue(value: unknown): value is DocumentValue {
  return typeof value === 'object' && value !== null;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
