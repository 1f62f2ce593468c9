import { createSeededRandom, seedFrom } from './seeded-random.js';
import { derivePageStatus, worstComponentStatus } from './status-rollup.js';
import { formatDate, formatTimestamp } from './timestamp.js';
import type {
  SimulatedFeed,
  StatuspageAffectedComponent,
  StatuspageComponent,
  StatuspageComponentStatus,
  StatuspageGroupComponent,
  StatuspageImpact,
  StatuspageIncident,
  StatuspageIncidentStatus,
  StatuspageIncidentUpdate,
  StatuspageLeafComponent,
  StatuspageMaintenance,
  StatuspageMaintenanceStatus,
} from './types.js';

export type { SimulatedFeed } from './types.js';

export interface StatusFeedTimeZone {
  /** IANA name written to `page.time_zone`, e.g. `America/New_York`. */
  name: string;
  /** Fixed UTC offset, in minutes, used to write every timestamp (e.g. -300 for `-05:00`). */
  offsetMinutes: number;
}

export interface SimulatedFeedOptions {
  /** Reference time; every timestamp is relative to it. Default: the current time. */
  now?: Date;
  /**
   * Number of component groups. Giving any size option (this one or any below) replaces the
   * hand-written demo with generated names ("Group 4", "Service 4.7"); sizes not given then
   * default to the demo's (3 groups × 5, 2 top-level, 1 incident × 3 updates, 2 maintenances).
   */
  groups?: number;
  /** Child components in each group. */
  componentsPerGroup?: number;
  /** Components outside any group. */
  topLevelComponents?: number;
  /** Unresolved incidents (summary.json only carries unresolved ones). */
  incidents?: number;
  /** Updates per incident, at least 1. */
  updatesPerIncident?: number;
  /**
   * Maintenances in summary.json: the first is in progress, the others scheduled. upcoming.json
   * lists the scheduled ones plus one further out that summary.json does not show.
   */
  maintenances?: number;
  /** Zone the page reports and timestamps are written in. Default: `Etc/UTC` (`...Z` stamps). */
  timeZone?: StatusFeedTimeZone;
}

/** Named sizes: `demo` is the hand-written ledger network feed, the others are generated. */
export const STATUS_FEED_PRESETS = {
  demo: {},
  /** About 60 components, like a real network's page, in a non-UTC zone. */
  realistic: {
    groups: 6,
    componentsPerGroup: 9,
    topLevelComponents: 6,
    incidents: 5,
    updatesPerIncident: 4,
    maintenances: 4,
    timeZone: { name: 'America/New_York', offsetMinutes: -300 },
  },
  /** 500 components. */
  large: {
    groups: 20,
    componentsPerGroup: 23,
    topLevelComponents: 20,
    incidents: 20,
    updatesPerIncident: 5,
    maintenances: 10,
  },
} as const satisfies Record<string, SimulatedFeedOptions>;

export type StatusFeedPreset = keyof typeof STATUS_FEED_PRESETS;

/** Builds a deterministic feed: the same options (and `now`) always give the same documents. */
export function createSimulatedFeed(options: SimulatedFeedOptions = {}): SimulatedFeed {
  const now = options.now ?? new Date();
  if (Number.isNaN(now.getTime())) throw new RangeError('options.now is an invalid Date');
  const timeZone = options.timeZone ?? { name: 'Etc/UTC', offsetMinutes: 0 };
  if (
    !Number.isInteger(timeZone.offsetMinutes) ||
    timeZone.offsetMinutes < -720 ||
    timeZone.offsetMinutes > 840
  ) {
    throw new RangeError('options.timeZone.offsetMinutes must be an integer from -720 to 840');
  }
  const sized = SIZE_KEYS.some((key) => options[key] !== undefined);
  const content = sized ? generatedContent(options) : demoContent();
  return renderFeed(content, now, timeZone);
}

const SIZE_KEYS = [
  'groups',
  'componentsPerGroup',
  'topLevelComponents',
  'incidents',
  'updatesPerIncident',
  'maintenances',
] as const satisfies ReadonlyArray<keyof SimulatedFeedOptions>;

// ---------------------------------------------------------------------------------------------
// Content: what the feed says, with components referred to by key before ids exist.

interface ComponentContent {
  key: string;
  name: string;
  description: string | null;
  startDaysAgo: number | null;
  showcase: boolean;
  onlyShowIfDegraded: boolean;
}

interface GroupContent {
  name: string;
  children: ComponentContent[];
}

interface UpdateContent<S> {
  status: S;
  body: string;
  minutesAgo: number;
}

interface IncidentContent {
  name: string;
  impact: StatuspageImpact;
  affected: Array<{ key: string; status: StatuspageComponentStatus }>;
  /** Oldest first; the last one's status is the incident's. */
  updates: UpdateContent<StatuspageIncidentStatus>[];
}

interface MaintenanceContent {
  name: string;
  componentKeys: string[];
  /** Negative once started. Future starts are rounded down to the hour, past ones to the minute. */
  startsInMinutes: number;
  durationMinutes: number;
  /** Oldest first; the last one's status is the maintenance's. */
  updates: UpdateContent<StatuspageMaintenanceStatus>[];
  /** False for maintenances only upcoming.json lists. */
  inSummary: boolean;
}

interface FeedContent {
  seed: number;
  pageName: string;
  pageUrl: string;
  groups: GroupContent[];
  topLevel: ComponentContent[];
  incidents: IncidentContent[];
  maintenances: MaintenanceContent[];
}

const SCHEDULED_BODY = 'We will be undergoing scheduled maintenance during this time.';
const IN_PROGRESS_BODY =
  'Scheduled maintenance is currently in progress. We will provide updates as necessary.';

const DEMO_NETWORKS = ['Mainnet', 'Testnet', 'Previewnet'] as const;

const DEMO_SERVICES: ReadonlyArray<Omit<ComponentContent, 'key'>> = [
  {
    name: 'Consensus Service',
    description: 'Transaction submission and consensus on the network nodes',
    startDaysAgo: null,
    showcase: false,
    onlyShowIfDegraded: false,
  },
  {
    name: 'Mirror Node REST API',
    description: 'Transactions, balances and contract results from the public mirror node',
    startDaysAgo: null,
    showcase: false,
    onlyShowIfDegraded: false,
  },
  {
    name: 'Mirror Node gRPC API',
    description: 'Topic message subscriptions from the public mirror node',
    startDaysAgo: null,
    showcase: false,
    onlyShowIfDegraded: false,
  },
  {
    name: 'JSON-RPC Relay',
    description: 'Ethereum-compatible JSON-RPC endpoint for smart contracts',
    startDaysAgo: 700,
    showcase: false,
    onlyShowIfDegraded: false,
  },
  {
    name: 'Network Explorer',
    description: null,
    startDaysAgo: null,
    showcase: false,
    onlyShowIfDegraded: false,
  },
];

const UPGRADED_SERVICES = [
  'Consensus Service',
  'Mirror Node REST API',
  'Mirror Node gRPC API',
  'JSON-RPC Relay',
];

function demoContent(): FeedContent {
  const networkKeys = (network: string): string[] =>
    UPGRADED_SERVICES.map((service) => `${network}/${service}`);
  return {
    seed: seedFrom('demo'),
    pageName: 'Ledger Network Status',
    pageUrl: 'https://status.example-ledger.com',
    groups: DEMO_NETWORKS.map((network) => ({
      name: network,
      children: DEMO_SERVICES.map((service) => ({ ...service, key: `${network}/${service.name}` })),
    })),
    topLevel: [
      {
        key: 'Developer Portal',
        name: 'Developer Portal',
        description: 'Documentation, SDK downloads and the testnet faucet',
        startDaysAgo: null,
        showcase: true,
        onlyShowIfDegraded: false,
      },
      {
        key: 'Status API',
        name: 'Status API',
        description: 'Programmatic access to this status page',
        startDaysAgo: 400,
        showcase: false,
        onlyShowIfDegraded: true,
      },
    ],
    incidents: [
      {
        name: 'Delayed data on Mirror Node REST API',
        impact: 'minor',
        affected: [
          { key: 'Mainnet/Mirror Node REST API', status: 'partial_outage' },
          { key: 'Testnet/Mirror Node REST API', status: 'degraded_performance' },
        ],
        updates: [
          {
            status: 'investigating',
            minutesAgo: 95,
            body:
              'We are investigating delays in record ingestion on the Mirror Node REST API for ' +
              'Mainnet and Testnet. Recent transactions, balances and contract results may take ' +
              'several minutes to appear.',
          },
          {
            status: 'identified',
            minutesAgo: 58,
            body:
              'The issue has been identified as an importer backlog following a storage failover ' +
              'in the mirror node cluster. The Consensus Service is not affected and transactions ' +
              'are processed normally. A fix is being rolled out.',
          },
          {
            status: 'monitoring',
            minutesAgo: 21,
            body:
              'A fix has been deployed and the importer is catching up. Testnet data is within a ' +
              'few seconds of consensus; Mainnet still lags by about two minutes. We are ' +
              'monitoring the results.',
          },
        ],
      },
      {
        name: 'Transaction submission errors on Testnet',
        impact: 'major',
        affected: [{ key: 'Testnet/Consensus Service', status: 'major_outage' }],
        updates: [
          {
            status: 'investigating',
            minutesAgo: 3 * 24 * 60 + 40,
            body: 'Transactions submitted to Testnet fail with BUSY. We are investigating.',
          },
          {
            status: 'resolved',
            minutesAgo: 3 * 24 * 60,
            body:
              'A consensus node with a full disk was taken out of rotation; submissions succeed ' +
              'again. This incident is resolved.',
          },
        ],
      },
    ],
    maintenances: [
      {
        name: 'Testnet upgrade to v0.58',
        componentKeys: networkKeys('Testnet'),
        startsInMinutes: -14 * 24 * 60,
        durationMinutes: 60,
        inSummary: false,
        updates: [
          { status: 'scheduled', minutesAgo: 17 * 24 * 60, body: SCHEDULED_BODY },
          { status: 'in_progress', minutesAgo: 14 * 24 * 60, body: IN_PROGRESS_BODY },
          {
            status: 'completed',
            minutesAgo: 14 * 24 * 60 - 50,
            body: 'The scheduled maintenance has been completed.',
          },
        ],
      },
      {
        name: 'Previewnet upgrade to v0.59',
        componentKeys: networkKeys('Previewnet'),
        startsInMinutes: -30,
        durationMinutes: 120,
        inSummary: true,
        updates: [
          {
            status: 'scheduled',
            minutesAgo: 2 * 24 * 60,
            body:
              'Previewnet will be upgraded to release v0.59. During the window transactions ' +
              'cannot be submitted and mirror node data may be delayed. The Network Explorer ' +
              'stays available.',
          },
          { status: 'in_progress', minutesAgo: 30, body: IN_PROGRESS_BODY },
        ],
      },
      {
        name: 'Mainnet upgrade to v0.58',
        componentKeys: networkKeys('Mainnet'),
        startsInMinutes: 3 * 24 * 60,
        durationMinutes: 60,
        inSummary: true,
        updates: [
          {
            status: 'scheduled',
            minutesAgo: 24 * 60,
            body:
              'Mainnet will be upgraded to release v0.58. Consensus nodes restart in sequence; ' +
              'transaction submission may fail intermittently for up to 40 minutes. Please ' +
              'retry failed transactions after the window.',
          },
        ],
      },
      {
        name: 'Testnet upgrade to v0.59',
        componentKeys: networkKeys('Testnet'),
        startsInMinutes: 10 * 24 * 60,
        durationMinutes: 60,
        inSummary: false,
        updates: [{ status: 'scheduled', minutesAgo: 6 * 60, body: SCHEDULED_BODY }],
      },
    ],
  };
}

const IMPACT_CYCLE: readonly StatuspageImpact[] = [
  'minor',
  'major',
  'minor',
  'none',
  'minor',
  'critical',
];
const STATUS_FOR_IMPACT: Partial<Record<StatuspageImpact, StatuspageComponentStatus>> = {
  none: 'operational',
  minor: 'degraded_performance',
  major: 'partial_outage',
  critical: 'major_outage',
};
const INCIDENT_PROGRESSION: readonly StatuspageIncidentStatus[] = [
  'investigating',
  'identified',
  'monitoring',
];
const UPDATE_SPACING_MINUTES = 15;

function sizeOption(
  options: SimulatedFeedOptions,
  key: (typeof SIZE_KEYS)[number],
  fallback: number,
) {
  const value = options[key] ?? fallback;
  const minimum = key === 'updatesPerIncident' ? 1 : 0;
  if (!Number.isSafeInteger(value) || value < minimum) {
    throw new RangeError(`options.${key} must be an integer >= ${minimum}, got ${value}`);
  }
  return value;
}

function generatedContent(options: SimulatedFeedOptions): FeedContent {
  const groupCount = sizeOption(options, 'groups', 3);
  const perGroup = sizeOption(options, 'componentsPerGroup', 5);
  const topLevelCount = sizeOption(options, 'topLevelComponents', 2);
  const incidentCount = sizeOption(options, 'incidents', 1);
  const updateCount = sizeOption(options, 'updatesPerIncident', 3);
  const maintenanceCount = sizeOption(options, 'maintenances', 2);

  const service = (key: string, name: string, n: number): ComponentContent => ({
    key,
    name,
    description: n % 3 === 0 ? null : `Generated component ${name}`,
    startDaysAgo: n % 4 === 0 ? 30 * n : null,
    showcase: n % 7 === 1,
    onlyShowIfDegraded: n % 11 === 10,
  });
  const groups: GroupContent[] = Array.from({ length: groupCount }, (_, g) => ({
    name: `Group ${g + 1}`,
    children: Array.from({ length: perGroup }, (_, c) =>
      service(`${g + 1}.${c + 1}`, `Service ${g + 1}.${c + 1}`, c + 1),
    ),
  }));
  const topLevel = Array.from({ length: topLevelCount }, (_, t) =>
    service(`${t + 1}`, `Service ${t + 1}`, t + 1),
  );
  const leaves = [...groups.flatMap((group) => group.children), ...topLevel];

  const incidents = Array.from({ length: incidentCount }, (_, i): IncidentContent => {
    const impact = IMPACT_CYCLE[i % IMPACT_CYCLE.length] ?? 'minor';
    // Spread incidents over the page rather than piling them on the first group.
    const first = i * Math.max(1, Math.floor(leaves.length / incidentCount));
    const picked = [leaves[first % leaves.length], leaves[(first + 1) % leaves.length]];
    const affected = [...new Set(picked)].filter((leaf) => leaf !== undefined);
    const names = affected.map((leaf) => leaf.name).join(' and ') || 'the network';
    const finalStep = Math.min([2, 1, 0][i % 3] ?? 0, updateCount - 1);
    const firstMinutesAgo = (updateCount - 1) * UPDATE_SPACING_MINUTES + 10 + i * 37;
    return {
      name: `Elevated error rates on ${names}`,
      impact,
      affected: affected.map((leaf) => ({
        key: leaf.key,
        status: STATUS_FOR_IMPACT[impact] ?? 'degraded_performance',
      })),
      updates: Array.from({ length: updateCount }, (_, u) => {
        const step = Math.min(u, finalStep);
        const repeated = u > 0 && Math.min(u - 1, finalStep) === step;
        return {
          status: INCIDENT_PROGRESSION[step] ?? 'investigating',
          body: incidentBody(step, repeated, names),
          minutesAgo: firstMinutesAgo - u * UPDATE_SPACING_MINUTES,
        };
      }),
    };
  });

  const maintenanceTargets = (m: number): string[] => {
    const group = groups[m % Math.max(groupCount, 1)];
    return (group ? group.children : topLevel).map((leaf) => leaf.key);
  };
  const scheduled = (m: number, inSummary: boolean): MaintenanceContent => ({
    name: `${groups[m % Math.max(groupCount, 1)]?.name ?? 'Platform'} scheduled upgrade #${m + 1}`,
    componentKeys: maintenanceTargets(m),
    startsInMinutes: 3 * (m + 1) * 24 * 60,
    durationMinutes: 120,
    inSummary,
    updates: [{ status: 'scheduled', minutesAgo: (m + 1) * 24 * 60, body: SCHEDULED_BODY }],
  });
  const maintenances = Array.from({ length: maintenanceCount }, (_, m): MaintenanceContent => {
    if (m > 0) return scheduled(m, true);
    return {
      ...scheduled(0, true),
      startsInMinutes: -30,
      updates: [
        { status: 'scheduled', minutesAgo: 3 * 24 * 60, body: SCHEDULED_BODY },
        { status: 'in_progress', minutesAgo: 30, body: IN_PROGRESS_BODY },
      ],
    };
  });
  if (maintenanceCount > 0) maintenances.push(scheduled(maintenanceCount + 2, false));

  return {
    seed: seedFrom(
      JSON.stringify([groupCount, perGroup, topLevelCount, incidentCount, updateCount]) +
        String(maintenanceCount),
    ),
    pageName: 'Generated Ledger Network Status',
    pageUrl: 'https://status.example-ledger.com',
    groups,
    topLevel,
    incidents,
    maintenances,
  };
}

function incidentBody(step: number, repeated: boolean, names: string): string {
  if (step === 0) {
    return repeated
      ? 'We are continuing to investigate this issue.'
      : `We are investigating elevated error rates on ${names}.`;
  }
  if (step === 1) {
    return repeated
      ? 'We are continuing to work on a fix for this issue.'
      : 'The issue has been identified and a fix is being implemented.';
  }
  return repeated
    ? 'We are continuing to monitor for any further issues.'
    : 'A fix has been implemented and we are monitoring the results.';
}

// ---------------------------------------------------------------------------------------------
// Rendering: content to wire format, with ids and timestamps.

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

interface LeafEntry {
  component: StatuspageLeafComponent;
  /** Statuspage names grouped components `Group - Component` in affected_components. */
  displayName: string;
}

function renderFeed(content: FeedContent, now: Date, timeZone: StatusFeedTimeZone): SimulatedFeed {
  const random = createSeededRandom(content.seed);
  const stamp = (date: Date): string => formatTimestamp(date, timeZone.offsetMinutes);
  // Past events get up to 20 s of jitter so they look organic; content spaces them >= 1 min apart.
  const ago = (minutes: number): Date =>
    new Date(now.getTime() - minutes * MINUTE_MS - random.int(20_000) - 1);
  const plusMs = (date: Date, ms: number): Date => new Date(date.getTime() + ms);

  const pageId = random.id();
  const components: StatuspageComponent[] = [];
  const leaves = new Map<string, LeafEntry>();

  const makeLeaf = (
    leaf: ComponentContent,
    position: number,
    group: StatuspageGroupComponent | null,
  ): StatuspageLeafComponent => {
    const createdMinutesAgo = (300 + random.int(500)) * 24 * 60;
    const component: StatuspageLeafComponent = {
      id: random.id(),
      name: leaf.name,
      status: 'operational',
      created_at: stamp(ago(createdMinutesAgo)),
      updated_at: stamp(ago(random.int(createdMinutesAgo))),
      position,
      description: leaf.description,
      showcase: leaf.showcase,
      start_date:
        leaf.startDaysAgo === null
          ? null
          : formatDate(
              new Date(now.getTime() - leaf.startDaysAgo * DAY_MS),
              timeZone.offsetMinutes,
            ),
      group_id: group?.id ?? null,
      page_id: pageId,
      group: false,
      only_show_if_degraded: leaf.onlyShowIfDegraded,
    };
    leaves.set(leaf.key, {
      component,
      displayName: group ? `${group.name} - ${leaf.name}` : leaf.name,
    });
    return component;
  };

  const groups: StatuspageGroupComponent[] = [];
  content.groups.forEach((groupContent, g) => {
    const createdMinutesAgo = (900 + random.int(100)) * 24 * 60;
    const group: StatuspageGroupComponent = {
      id: random.id(),
      name: groupContent.name,
      status: 'operational',
      created_at: stamp(ago(createdMinutesAgo)),
      updated_at: stamp(ago(random.int(createdMinutesAgo))),
      position: g + 1,
      description: null,
      showcase: false,
      start_date: null,
      group_id: null,
      page_id: pageId,
      group: true,
      only_show_if_degraded: false,
      components: [],
    };
    groups.push(group);
    components.push(group);
    groupContent.children.forEach((child, c) => {
      const component = makeLeaf(child, c + 1, group);
      group.components.push(component.id);
      components.push(component);
    });
  });
  content.topLevel.forEach((leaf, t) => {
    components.push(makeLeaf(leaf, content.groups.length + t + 1, null));
  });

  const setStatus = (key: string, status: StatuspageComponentStatus, at: Date): void => {
    const entry = leaves.get(key);
    if (!entry) throw new Error(`Fixture refers to unknown component ${key}`);
    const worst = worstComponentStatus([entry.component.status, status]);
    if (worst === entry.component.status) return;
    entry.component.status = worst;
    entry.component.updated_at = stamp(at);
  };

  // Timestamps of updates are drawn first, since component statuses depend on them.
  const maintenanceTimes = content.maintenances.map((m) => m.updates.map((u) => ago(u.minutesAgo)));
  const incidentTimes = content.incidents.map((i) => i.updates.map((u) => ago(u.minutesAgo)));

  content.maintenances.forEach((maintenance, m) => {
    const last = maintenance.updates.length - 1;
    const lastAt = maintenanceTimes[m]?.[last];
    if (maintenance.updates[last]?.status !== 'in_progress' || !lastAt) return;
    for (const key of maintenance.componentKeys) setStatus(key, 'under_maintenance', lastAt);
  });
  content.incidents.forEach((incident, i) => {
    const firstAt = incidentTimes[i]?.[0];
    if (!firstAt || isResolved(incident)) return;
    for (const { key, status } of incident.affected) setStatus(key, status, firstAt);
  });

  for (const group of groups) {
    const children = components.filter((c) => !c.group && c.group_id === group.id);
    group.status = worstComponentStatus(children.map((child) => child.status));
    if (group.status !== 'operational') {
      const latest = Math.max(...children.map((child) => Date.parse(child.updated_at)));
      group.updated_at = stamp(new Date(latest));
    }
  }

  const copiesOf = (keys: readonly string[]): StatuspageComponent[] =>
    keys.flatMap((key) => {
      const entry = leaves.get(key);
      return entry ? [structuredClone(entry.component)] : [];
    });

  const renderUpdates = (
    incidentId: string,
    updates: readonly UpdateContent<
      StatuspageIncident['status'] | StatuspageMaintenance['status']
    >[],
    times: readonly Date[],
    affectedAt: (index: number) => StatuspageAffectedComponent[] | null,
  ): StatuspageIncidentUpdate[] =>
    updates
      .map((update, u): StatuspageIncidentUpdate => {
        const at = stamp(times[u] ?? now);
        return {
          id: random.id(),
          status: update.status,
          body: update.body,
          incident_id: incidentId,
          created_at: at,
          updated_at: at,
          display_at: at,
          affected_components: affectedAt(u),
          deliver_notifications: true,
          custom_tweet: null,
          tweet_id: null,
        };
      })
      .reverse();

  const affectedList = (
    entries: ReadonlyArray<{
      key: string;
      from: StatuspageComponentStatus;
      to: StatuspageComponentStatus;
    }>,
  ): StatuspageAffectedComponent[] | null => {
    const list = entries.flatMap(({ key, from, to }) => {
      const entry = leaves.get(key);
      return entry
        ? [{ code: entry.component.id, name: entry.displayName, old_status: from, new_status: to }]
        : [];
    });
    return list.length > 0 ? list : null;
  };

  const incidents = content.incidents.map((incident, i): StatuspageIncident => {
    const times = incidentTimes[i] ?? [];
    const first = times[0] ?? now;
    const last = times[times.length - 1] ?? now;
    const created = plusMs(first, -(20 + random.int(150)));
    const id = random.id();
    const monitoringIndex = incident.updates.findIndex((u) => u.status === 'monitoring');
    const monitoringAt = times[monitoringIndex];
    return {
      id,
      name: incident.name,
      status: incident.updates[incident.updates.length - 1]?.status ?? 'investigating',
      created_at: stamp(created),
      updated_at: stamp(plusMs(last, 5 + random.int(40))),
      monitoring_at: monitoringAt ? stamp(monitoringAt) : null,
      resolved_at: isResolved(incident) ? stamp(last) : null,
      impact: incident.impact,
      shortlink: `https://stspg.io/${random.id()}`,
      started_at: stamp(plusMs(created, -(1 + random.int(10)))),
      page_id: pageId,
      incident_updates: renderUpdates(id, incident.updates, times, (u) =>
        affectedList(
          incident.affected.map(({ key, status }) => ({
            key,
            from: u === 0 ? 'operational' : status,
            to: status,
          })),
        ),
      ),
      components: copiesOf(incident.affected.map((a) => a.key)),
      reminder_intervals: null,
    };
  });

  const maintenances = content.maintenances.map((maintenance, m): StatuspageMaintenance => {
    const times = maintenanceTimes[m] ?? [];
    const first = times[0] ?? now;
    const last = times[times.length - 1] ?? now;
    const created = plusMs(first, -(20 + random.int(150)));
    const unit = maintenance.startsInMinutes > 0 ? HOUR_MS : MINUTE_MS;
    const startMs = now.getTime() + maintenance.startsInMinutes * MINUTE_MS;
    const scheduledFor = new Date(Math.floor(startMs / unit) * unit);
    const id = random.id();
    return {
      id,
      name: maintenance.name,
      status: maintenance.updates[maintenance.updates.length - 1]?.status ?? 'scheduled',
      created_at: stamp(created),
      updated_at: stamp(plusMs(last, 5 + random.int(40))),
      monitoring_at: null,
      resolved_at:
        maintenance.updates[maintenance.updates.length - 1]?.status === 'completed'
          ? stamp(last)
          : null,
      impact: 'maintenance',
      shortlink: `https://stspg.io/${random.id()}`,
      started_at: stamp(plusMs(created, -(1 + random.int(10)))),
      page_id: pageId,
      incident_updates: renderUpdates(id, maintenance.updates, times, (u) =>
        affectedList(
          maintenance.componentKeys.map((key) => ({
            key,
            from: 'operational',
            to:
              maintenance.updates[u]?.status === 'in_progress'
                ? 'under_maintenance'
                : 'operational',
          })),
        ),
      ),
      components: copiesOf(maintenance.componentKeys),
      scheduled_for: stamp(scheduledFor),
      scheduled_until: stamp(plusMs(scheduledFor, maintenance.durationMinutes * MINUTE_MS)),
    };
  });

  const byStart = (a: StatuspageMaintenance, b: StatuspageMaintenance): number =>
    Date.parse(a.scheduled_for) - Date.parse(b.scheduled_for);
  const summaryMaintenances = maintenances
    .filter(
      (maintenance, m) => content.maintenances[m]?.inSummary && maintenance.status !== 'completed',
    )
    .sort(byStart);
  const unresolvedIncidents = incidents.filter((incident) => incident.resolved_at === null);
  const upcomingMaintenances = maintenances
    .filter((maintenance) => maintenance.status === 'scheduled')
    .sort(byStart);

  const latestChange = Math.max(
    ...[...components, ...unresolvedIncidents, ...summaryMaintenances].map((entry) =>
      Date.parse(entry.updated_at),
    ),
  );
  const page = {
    id: pageId,
    name: content.pageName,
    url: content.pageUrl,
    time_zone: timeZone.name,
    updated_at: stamp(Number.isFinite(latestChange) ? new Date(latestChange) : now),
  };

  return {
    summary: {
      page,
      components,
      incidents: unresolvedIncidents,
      scheduled_maintenances: summaryMaintenances,
      status: derivePageStatus(components, unresolvedIncidents, summaryMaintenances),
    },
    upcoming: {
      page: structuredClone(page),
      scheduled_maintenances: structuredClone(upcomingMaintenances),
    },
    incidentHistory: {
      page: structuredClone(page),
      incidents: structuredClone(
        [...incidents].sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at)),
      ).slice(0, HISTORY_LENGTH),
    },
    maintenanceHistory: {
      page: structuredClone(page),
      scheduled_maintenances: structuredClone(
        [...maintenances].sort((a, b) => byStart(b, a)),
      ).slice(0, HISTORY_LENGTH),
    },
  };
}

/** Statuspage's history documents list the 50 most recent events. */
const HISTORY_LENGTH = 50;

const isResolved = (incident: IncidentContent): boolean => {
  const status = incident.updates[incident.updates.length - 1]?.status;
  return status === 'resolved' || status === 'postmortem';
};
