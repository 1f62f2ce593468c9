import type { Unknown } from '../enum-value.js';

/*
 * The status feed's domain, as the graph serves it: enum values in SCREAMING_CASE, timestamps as
 * Dates, and the component tree linked by reference, so `group`, `children` and the incidents of a
 * component are property reads.
 */

export const STATUS_INDICATORS = ['NONE', 'MINOR', 'MAJOR', 'CRITICAL', 'MAINTENANCE'] as const;
export const COMPONENT_STATUSES = [
  'OPERATIONAL',
  'DEGRADED_PERFORMANCE',
  'PARTIAL_OUTAGE',
  'MAJOR_OUTAGE',
  'UNDER_MAINTENANCE',
] as const;
export const INCIDENT_STATUSES = [
  'INVESTIGATING',
  'IDENTIFIED',
  'MONITORING',
  'RESOLVED',
  'POSTMORTEM',
] as const;
export const MAINTENANCE_STATUSES = ['SCHEDULED', 'IN_PROGRESS', 'VERIFYING', 'COMPLETED'] as const;
export const UPDATE_STATUSES = [...INCIDENT_STATUSES, ...MAINTENANCE_STATUSES] as const;
export const IMPACTS = ['NONE', 'MINOR', 'MAJOR', 'CRITICAL', 'MAINTENANCE'] as const;

export type StatusIndicator = (typeof STATUS_INDICATORS)[number] | Unknown;

/**
 * How bad each indicator is, for the worst of several pages: a value this gateway does not know
 * ranks above all-clear (something is said) and below maintenance.
 */
export const INDICATOR_SEVERITY: Readonly<Record<StatusIndicator, number>> = {
  NONE: 0,
  UNKNOWN: 1,
  MAINTENANCE: 2,
  MINOR: 3,
  MAJOR: 4,
  CRITICAL: 5,
};

/** How bad each component status is, for lists worst first; operational is 0. */
export const COMPONENT_STATUS_SEVERITY: Readonly<Record<ComponentStatus, number>> = {
  OPERATIONAL: 0,
  UNKNOWN: 1,
  UNDER_MAINTENANCE: 2,
  DEGRADED_PERFORMANCE: 3,
  PARTIAL_OUTAGE: 4,
  MAJOR_OUTAGE: 5,
};
export type ComponentStatus = (typeof COMPONENT_STATUSES)[number] | Unknown;
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number] | Unknown;
export type MaintenanceStatus = (typeof MAINTENANCE_STATUSES)[number] | Unknown;
export type UpdateStatus = (typeof UPDATE_STATUSES)[number] | Unknown;
export type Impact = (typeof IMPACTS)[number] | Unknown;

/** The slug of the page a gateway configured with `STATUS_BASE_URL` alone serves. */
export const DEFAULT_PAGE_SLUG = 'default';

/** Which configured page a document was read from, and what its build needs to know of it. */
export interface FeedPage {
  /** The page's slug in the configuration: what everything read from it carries. */
  readonly slug: string;
  /** Cuts a component's software version out of its name (its first capture group). */
  readonly versionPattern?: RegExp | undefined;
}

export interface Page {
  /** The configured page this document was read from. */
  readonly slug: string;
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly timeZone: string | null;
  readonly updatedAt: Date;
}

export interface PageStatus {
  readonly indicator: StatusIndicator;
  readonly description: string;
}

export interface Component {
  /** The slug of the configured page that lists it. */
  readonly pageSlug: string;
  readonly id: string;
  readonly name: string;
  /** The software version its name carries, by the page's `versionPattern`; null without one. */
  readonly version: string | null;
  readonly description: string | null;
  readonly status: ComponentStatus;
  readonly position: number;
  readonly showcase: boolean;
  readonly onlyShowIfDegraded: boolean;
  /** A calendar date, `YYYY-MM-DD`, as the page wrote it. */
  readonly startDate: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly isGroup: boolean;
  /** The containing group, when `group_id` names a component of the same feed. */
  readonly group: Component | null;
  /** Components whose `group_id` is this one, by position. */
  readonly children: readonly Component[];
  /** Unresolved incidents of the summary that list this component. */
  readonly incidents: readonly Incident[];
  /** Maintenances of the summary that list this component. */
  readonly maintenances: readonly Maintenance[];
}

export interface AffectedComponent {
  /** The component's id. */
  readonly id: string;
  readonly name: string | null;
  readonly oldStatus: ComponentStatus;
  readonly newStatus: ComponentStatus;
}

export interface IncidentUpdate {
  readonly id: string;
  readonly status: UpdateStatus;
  readonly body: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly displayAt: Date;
  readonly affectedComponents: readonly AffectedComponent[];
  /** Whether subscribers were notified of it; null when the feed does not say. */
  readonly deliverNotifications: boolean | null;
  readonly tweetId: string | null;
  readonly customTweet: string | null;
}

/** What incidents and maintenances share. */
export interface StatusEvent {
  /** The slug of the configured page that lists it. */
  readonly pageSlug: string;
  readonly id: string;
  readonly name: string;
  readonly impact: Impact;
  readonly shortlink: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly startedAt: Date | null;
  readonly monitoringAt: Date | null;
  readonly resolvedAt: Date | null;
  /** Hours before the start when subscribers are reminded; null when the feed does not say. */
  readonly reminderIntervals: readonly number[] | null;
  /** Newest first. */
  readonly updates: readonly IncidentUpdate[];
  /**
   * The affected components as the event lists them. They are resolved against the summary's
   * component tree when served, so that they are the very nodes of the tree.
   */
  readonly components: readonly Component[];
}

export interface Incident extends StatusEvent {
  readonly status: IncidentStatus;
}

export interface Maintenance extends StatusEvent {
  readonly status: MaintenanceStatus;
  readonly scheduledFor: Date;
  readonly scheduledUntil: Date;
}

/** The summary endpoint, indexed once per fetch. */
export interface StatusSummary {
  readonly page: Page;
  readonly status: PageStatus;
  /** Every component, by position. */
  readonly components: readonly Component[];
  /** Components without a group in this feed, by position. */
  readonly topLevelComponents: readonly Component[];
  readonly componentsById: ReadonlyMap<string, Component>;
  readonly incidents: readonly Incident[];
  readonly incidentsById: ReadonlyMap<string, Incident>;
  readonly maintenances: readonly Maintenance[];
  readonly maintenancesById: ReadonlyMap<string, Maintenance>;
}

/** The upcoming-maintenances endpoint. */
export interface UpcomingMaintenances {
  readonly page: Page;
  readonly maintenances: readonly Maintenance[];
  readonly maintenancesById: ReadonlyMap<string, Maintenance>;
}

/** The events of a history document, with each component's events indexed. */
export interface EventHistory<Event extends StatusEvent> {
  readonly page: Page;
  /** As the feed lists them: the most recent first. */
  readonly events: readonly Event[];
  readonly eventsById: ReadonlyMap<string, Event>;
  /** The events that list a component, by the component's id. */
  readonly eventsByComponentId: ReadonlyMap<string, readonly Event[]>;
}

/** `incidents.json`: the 50 most recent incidents, resolved ones included. */
export type IncidentHistory = EventHistory<Incident>;

/** `scheduled-maintenances.json`: the 50 most recent maintenances, completed ones included. */
export type MaintenanceHistory = EventHistory<Maintenance>;

/**
 * A page's documents, by name, as the domain holds them: what the graph reads, and what every
 * provider declares (`feed-document.ts`).
 */
export interface FeedDocuments {
  /** Page, indicator, components, unresolved incidents, maintenances. */
  readonly summary: StatusSummary;
  /** The maintenances scheduled and not yet begun. */
  readonly upcoming: UpcomingMaintenances;
  /** The most recent incidents, resolved ones included. */
  readonly incidentHistory: IncidentHistory;
  /** The most recent maintenances, completed ones included. */
  readonly maintenanceHistory: MaintenanceHistory;
}
