import { formatTimestamp, offsetOf } from './timestamp.js';
import type {
  SimulatedFeed,
  StatuspageComponent,
  StatuspageComponentStatus,
  StatuspageIncident,
  StatuspageIndicator,
  StatuspageMaintenance,
  StatuspageStatus,
} from './types.js';

const COMPONENT_SEVERITY: Record<StatuspageComponentStatus, number> = {
  operational: 0,
  under_maintenance: 1,
  degraded_performance: 2,
  partial_outage: 3,
  major_outage: 4,
};

const INDICATOR_SEVERITY: Record<StatuspageIndicator, number> = {
  none: 0,
  maintenance: 1,
  minor: 2,
  major: 3,
  critical: 4,
};

export const STATUSPAGE_COMPONENT_STATUSES = Object.keys(
  COMPONENT_SEVERITY,
) as StatuspageComponentStatus[];

export function worstComponentStatus(
  statuses: Iterable<StatuspageComponentStatus>,
): StatuspageComponentStatus {
  let worst: StatuspageComponentStatus = 'operational';
  for (const status of statuses) {
    if (COMPONENT_SEVERITY[status] > COMPONENT_SEVERITY[worst]) worst = status;
  }
  return worst;
}

/**
 * The page-wide status as Statuspage shows it: the worst of what the leaf components say and what
 * the open incidents and in-progress maintenances declare.
 */
export function derivePageStatus(
  components: readonly StatuspageComponent[],
  incidents: readonly StatuspageIncident[],
  maintenances: readonly StatuspageMaintenance[],
): StatuspageStatus {
  const leaves = components.filter((component) => !component.group);
  const worst = worstComponentStatus(leaves.map((component) => component.status));
  let indicator: StatuspageIndicator = 'none';
  let description = 'All Systems Operational';
  const raise = (candidate: StatuspageIndicator, text: string): void => {
    if (INDICATOR_SEVERITY[candidate] > INDICATOR_SEVERITY[indicator]) {
      indicator = candidate;
      description = text;
    }
  };

  if (worst === 'major_outage') {
    const down = leaves.filter((component) => component.status === 'major_outage').length;
    if (down * 2 >= leaves.length) raise('critical', 'Major System Outage');
    else raise('major', 'Partial System Outage');
  } else if (worst === 'partial_outage') {
    raise('minor', 'Minor Service Outage');
  } else if (worst === 'degraded_performance') {
    raise('minor', 'Partially Degraded Service');
  } else if (worst === 'under_maintenance') {
    raise('maintenance', 'Service Under Maintenance');
  }

  for (const incident of incidents) {
    if (incident.status === 'resolved' || incident.status === 'postmortem') continue;
    if (incident.impact === 'critical') raise('critical', 'Major System Outage');
    else if (incident.impact === 'major') raise('major', 'Partial System Outage');
    else if (incident.impact === 'minor') raise('minor', 'Minor Service Outage');
  }
  if (maintenances.some((maintenance) => maintenance.status === 'in_progress')) {
    raise('maintenance', 'Service Under Maintenance');
  }
  return { indicator, description };
}

/**
 * Recomputes what Statuspage derives from the component list: group statuses (worst child), the
 * component copies inside incidents and maintenances, the page status, and upcoming.json's page.
 * Call it after editing component statuses; `setComponentStatuses` does.
 */
export function refreshDerivedState(feed: SimulatedFeed): void {
  const { summary, upcoming } = feed;
  const byId = new Map(summary.components.map((component) => [component.id, component]));

  for (const group of summary.components) {
    if (!group.group) continue;
    const children = group.components
      .map((id) => byId.get(id))
      .filter((child): child is StatuspageComponent => child !== undefined);
    const status = worstComponentStatus(children.map((child) => child.status));
    if (status === group.status) continue;
    group.status = status;
    const latest = children.reduce<string | null>(
      (acc, child) =>
        acc === null || Date.parse(child.updated_at) > Date.parse(acc) ? child.updated_at : acc,
      null,
    );
    if (latest !== null) group.updated_at = latest;
  }

  const refreshCopies = (components: StatuspageComponent[]): StatuspageComponent[] =>
    components.map((copy) => {
      const current = byId.get(copy.id);
      return current ? structuredClone(current) : copy;
    });
  for (const incident of [...summary.incidents, ...(feed.incidentHistory?.incidents ?? [])]) {
    incident.components = refreshCopies(incident.components);
  }
  for (const maintenance of [
    ...summary.scheduled_maintenances,
    ...upcoming.scheduled_maintenances,
    ...(feed.maintenanceHistory?.scheduled_maintenances ?? []),
  ]) {
    maintenance.components = refreshCopies(maintenance.components);
  }

  summary.status = derivePageStatus(
    summary.components,
    summary.incidents,
    summary.scheduled_maintenances,
  );
  upcoming.page = structuredClone(summary.page);
  if (feed.incidentHistory) feed.incidentHistory.page = structuredClone(summary.page);
  if (feed.maintenanceHistory) feed.maintenanceHistory.page = structuredClone(summary.page);
}

/**
 * Sets leaf component statuses (stamping `updated_at` and the page's `updated_at` with `now`), then
 * refreshes the derived state. Throws a RangeError, changing nothing, if an id is unknown or names
 * a group (a group's status follows its children).
 */
export function setComponentStatuses(
  feed: SimulatedFeed,
  statuses: Readonly<Record<string, StatuspageComponentStatus>>,
  now: Date = new Date(),
): void {
  const byId = new Map(feed.summary.components.map((component) => [component.id, component]));
  const unknown: string[] = [];
  const groups: string[] = [];
  for (const id of Object.keys(statuses)) {
    const component = byId.get(id);
    if (!component) unknown.push(id);
    else if (component.group) groups.push(id);
  }
  if (unknown.length > 0) throw new RangeError(`Unknown component id(s): ${unknown.join(', ')}`);
  if (groups.length > 0) {
    throw new RangeError(
      `Component id(s) ${groups.join(', ')} are groups; set the status of their children instead`,
    );
  }

  const stamp = formatTimestamp(now, offsetOf(feed.summary.page.updated_at));
  for (const [id, status] of Object.entries(statuses)) {
    const component = byId.get(id);
    if (!component || component.status === status) continue;
    component.status = status;
    component.updated_at = stamp;
  }
  feed.summary.page.updated_at = stamp;
  refreshDerivedState(feed);
}
