/**
 * Wire format of a Statuspage v2 public feed (`/api/v2/summary.json`,
 * `/api/v2/scheduled-maintenances/upcoming.json`), as the upstream sends it.
 * Timestamps are ISO 8601 strings with milliseconds, either in UTC (`...Z`) or with the page's
 * offset (`...-05:00`); ids are 12-character lowercase alphanumerics.
 */

export type StatuspageComponentStatus =
  | 'operational'
  | 'degraded_performance'
  | 'partial_outage'
  | 'major_outage'
  | 'under_maintenance';

export type StatuspageIndicator = 'none' | 'minor' | 'major' | 'critical' | 'maintenance';

export type StatuspageIncidentStatus =
  | 'investigating'
  | 'identified'
  | 'monitoring'
  | 'resolved'
  | 'postmortem';

export type StatuspageMaintenanceStatus = 'scheduled' | 'in_progress' | 'verifying' | 'completed';

export type StatuspageImpact = 'none' | 'minor' | 'major' | 'critical' | 'maintenance';

export interface StatuspagePage {
  id: string;
  name: string;
  url: string;
  time_zone: string;
  updated_at: string;
}

export interface StatuspageStatus {
  indicator: StatuspageIndicator;
  description: string;
}

interface StatuspageComponentFields {
  id: string;
  name: string;
  status: StatuspageComponentStatus;
  created_at: string;
  updated_at: string;
  /** 1-based order among siblings (inside a group, or among top-level entries). */
  position: number;
  description: string | null;
  showcase: boolean;
  /** A date without time (`2024-03-01`), or null. */
  start_date: string | null;
  group_id: string | null;
  page_id: string;
  only_show_if_degraded: boolean;
}

export interface StatuspageLeafComponent extends StatuspageComponentFields {
  group: false;
}

export interface StatuspageGroupComponent extends StatuspageComponentFields {
  group: true;
  group_id: null;
  /** Ids of the child components, whose `group_id` is this group's id. */
  components: string[];
}

export type StatuspageComponent = StatuspageLeafComponent | StatuspageGroupComponent;

export interface StatuspageAffectedComponent {
  /** The component id. */
  code: string;
  /** For a grouped component Statuspage writes `Group - Component`. */
  name: string;
  old_status: StatuspageComponentStatus;
  new_status: StatuspageComponentStatus;
}

export interface StatuspageIncidentUpdate {
  id: string;
  status: StatuspageIncidentStatus | StatuspageMaintenanceStatus;
  body: string;
  incident_id: string;
  created_at: string;
  updated_at: string;
  display_at: string;
  affected_components: StatuspageAffectedComponent[] | null;
  deliver_notifications: boolean;
  custom_tweet: string | null;
  tweet_id: string | null;
}

export interface StatuspageIncident {
  id: string;
  name: string;
  status: StatuspageIncidentStatus;
  created_at: string;
  updated_at: string;
  monitoring_at: string | null;
  resolved_at: string | null;
  impact: StatuspageImpact;
  shortlink: string;
  started_at: string;
  page_id: string;
  /** Newest first. */
  incident_updates: StatuspageIncidentUpdate[];
  /** Copies of the affected component objects, with their current status. */
  components: StatuspageComponent[];
  reminder_intervals?: string | null;
}

export interface StatuspageMaintenance extends Omit<StatuspageIncident, 'status'> {
  status: StatuspageMaintenanceStatus;
  scheduled_for: string;
  scheduled_until: string;
}

export interface StatuspageSummary {
  page: StatuspagePage;
  components: StatuspageComponent[];
  /** Unresolved incidents only. */
  incidents: StatuspageIncident[];
  /** Upcoming and in-progress maintenances. */
  scheduled_maintenances: StatuspageMaintenance[];
  status: StatuspageStatus;
}

export interface StatuspageUpcoming {
  page: StatuspagePage;
  /** Only maintenances with status `scheduled`. */
  scheduled_maintenances: StatuspageMaintenance[];
}

/** `incidents.json`: the 50 most recent incidents, resolved ones included, newest first. */
export interface StatuspageIncidentHistory {
  page: StatuspagePage;
  incidents: StatuspageIncident[];
}

/** `scheduled-maintenances.json`: the 50 most recent maintenances, completed ones included. */
export interface StatuspageMaintenanceHistory {
  page: StatuspagePage;
  scheduled_maintenances: StatuspageMaintenance[];
}

/**
 * The documents the simulated upstream serves. They may differ the way real feeds do; a history
 * document left out is answered 404, as hosts that lack it answer.
 */
export interface SimulatedFeed {
  summary: StatuspageSummary;
  upcoming: StatuspageUpcoming;
  incidentHistory?: StatuspageIncidentHistory;
  maintenanceHistory?: StatuspageMaintenanceHistory;
}
