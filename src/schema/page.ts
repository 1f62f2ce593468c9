import { READS_STATUS_SNAPSHOTS } from '../http/response-cache/cacheability.js';
import { changeOf } from '../subscriptions/subscription-registry.js';
import type { Snapshot } from '../upstreams/snapshot-cache.js';
import type { PageStatus, StatusSummary } from '../upstreams/status-feed/model.js';
import { FEED_DOCUMENTS } from '../upstreams/status-feed/status-feed.js';
import { builder } from './builder.js';
import { ComponentRef, ComponentStatusEnum } from './component.js';
import { IncidentRef } from './incident.js';
import { MaintenanceRef } from './maintenance.js';

export const StatusIndicatorEnum = builder.enumType('StatusIndicator', {
  description: 'The overall state of the page, worst first: what the banner at the top shows.',
  values: {
    NONE: { description: 'All systems operational.' },
    MINOR: { description: 'A minor outage or degraded performance somewhere.' },
    MAJOR: { description: 'A major outage of at least one component.' },
    CRITICAL: { description: 'A critical outage: the network or a core service is down.' },
    MAINTENANCE: { description: 'Maintenance is in progress.' },
    UNKNOWN: {
      description:
        'The feed sent a value this gateway does not know yet. Show a neutral state rather than failing.',
    },
  } as const,
});

const PageStatusRef = builder.objectRef<PageStatus>('PageStatus').implement({
  extensions: READS_STATUS_SNAPSHOTS,
  description: 'The overall status of the page, as the banner at its top shows it.',
  fields: (t) => ({
    indicator: t.expose('indicator', {
      type: StatusIndicatorEnum,
      description: 'How bad things are overall; pick the banner colour from it.',
    }),
    description: t.exposeString('description', {
      description: 'The banner text the status page shows, e.g. "Partial System Outage".',
    }),
  }),
});

export const PageRef = builder.objectRef<Snapshot<StatusSummary>>('Page').implement({
  extensions: READS_STATUS_SNAPSHOTS,
  description:
    'The public status page of the ledger network: its overall status, its components and what is going on with them.',
  fields: (t) => ({
    id: t.id({
      extensions: READS_STATUS_SNAPSHOTS,
      description: 'Identifier of the status page.',
      resolve: (s) => s.value.page.id,
    }),
    name: t.string({
      extensions: READS_STATUS_SNAPSHOTS,
      description: 'Name of the status page, e.g. "Ledger Network Status".',
      resolve: (s) => s.value.page.name,
    }),
    url: t.field({
      extensions: READS_STATUS_SNAPSHOTS,
      type: 'URL',
      description: 'Address of the human-readable status page; link to it for details.',
      resolve: (s) => s.value.page.url,
    }),
    timeZone: t.string({
      extensions: READS_STATUS_SNAPSHOTS,
      nullable: true,
      description:
        'The time zone the page shows times in, as an IANA name, e.g. `Etc/UTC`. Null when the feed does not say.',
      resolve: (s) => s.value.page.timeZone,
    }),
    updatedAt: t.field({
      extensions: READS_STATUS_SNAPSHOTS,
      type: 'DateTime',
      description: 'When anything on the page last changed.',
      resolve: (s) => s.value.page.updatedAt,
    }),
    fetchedAt: t.field({
      extensions: READS_STATUS_SNAPSHOTS,
      type: 'DateTime',
      description:
        'When the gateway fetched this data from the status feed. Show it as "as of …"; while the feed is down it can lag behind by a few minutes.',
      resolve: (s) => s.fetchedAt,
    }),
    stale: t.exposeBoolean('stale', {
      description:
        'True while the status feed cannot be reached and this is the last good copy (see `fetchedAt` for its age). Show a "data may be out of date" hint.',
    }),
    status: t.field({
      extensions: READS_STATUS_SNAPSHOTS,
      type: PageStatusRef,
      description: 'The overall status: indicator and banner text.',
      resolve: (s) => s.value.status,
    }),
    components: t.field({
      extensions: READS_STATUS_SNAPSHOTS,
      type: [ComponentRef],
      description:
        'Components of the network, ordered by position. Use `topLevel: true` to get the roots of the tree (groups and ungrouped components) and walk `children` from there.',
      args: {
        status: t.arg({
          type: [ComponentStatusEnum],
          required: false,
          description:
            'Only components in one of these statuses, e.g. `[PARTIAL_OUTAGE, MAJOR_OUTAGE]`. Omit for all.',
        }),
        topLevel: t.arg.boolean({
          required: false,
          defaultValue: false,
          description:
            'Only components without a group. A component whose group is missing from the feed counts as top level, so nothing disappears.',
        }),
      },
      resolve: (s, { status, topLevel }) => {
        const components = topLevel ? s.value.topLevelComponents : s.value.components;
        if (!status) return components;
        const wanted = new Set(status);
        return components.filter((component) => wanted.has(component.status));
      },
    }),
    incidents: t.field({
      extensions: READS_STATUS_SNAPSHOTS,
      type: [IncidentRef],
      description: 'Unresolved incidents, as the page lists them. Empty when all is well.',
      resolve: (s) => s.value.incidents,
    }),
    scheduledMaintenances: t.field({
      extensions: READS_STATUS_SNAPSHOTS,
      type: [MaintenanceRef],
      description:
        'Maintenances that are in progress or scheduled, as the page summary lists them.',
      resolve: (s) => s.value.maintenances,
    }),
    upcomingMaintenances: t.field({
      extensions: READS_STATUS_SNAPSHOTS,
      type: [MaintenanceRef],
      nullable: true,
      description:
        "Maintenances scheduled to start later, from the feed's list of upcoming maintenances. It can reach further ahead than `scheduledMaintenances`. Null, with an error naming the document, when the feed does not serve that list: the rest of the page still answers.",
      resolve: async (_s, _args, { statusFeed }) =>
        (await statusFeed.upcoming()).value.maintenances,
    }),
    incidentHistory: t.field({
      extensions: READS_STATUS_SNAPSHOTS,
      type: [IncidentRef],
      nullable: true,
      description:
        'The page\'s recent incidents, resolved ones included (its 50 most recent), most recent first: what a status page shows under "Past incidents". Null, with an error naming the document, when the feed does not serve its history.',
      resolve: async (_s, _args, { statusFeed }) =>
        (await statusFeed.incidentHistory()).value.events,
    }),
    maintenanceHistory: t.field({
      extensions: READS_STATUS_SNAPSHOTS,
      type: [MaintenanceRef],
      nullable: true,
      description:
        "The page's recent maintenances, completed ones included (its 50 most recent), latest window first. Null, with an error naming the document, when the feed does not serve its history.",
      resolve: async (_s, _args, { statusFeed }) =>
        (await statusFeed.maintenanceHistory()).value.events,
    }),
  }),
});

builder.asEntity(PageRef, {
  key: builder.selection<{ id: string }>('id'),
  resolveReference: async ({ id }, { statusFeed }) => {
    const snapshot = await statusFeed.summary();
    return snapshot.value.page.id === id ? snapshot : null;
  },
});

builder.queryField('statusPage', (t) =>
  t.field({
    extensions: READS_STATUS_SNAPSHOTS,
    type: PageRef,
    description:
      'The status page of the ledger network. Fails with `UPSTREAM_UNAVAILABLE` or `UPSTREAM_BAD_RESPONSE` only when the feed is down and no recent copy is on hand.',
    resolve: (_root, _args, { statusFeed }) => statusFeed.summary(),
  }),
);

builder.subscriptionField('statusPageChanged', (t) =>
  t.field({
    type: PageRef,
    description:
      'The whole page, once on subscribe and again each time anything on it changes: its banner, a component, an incident or maintenance, or the upcoming and past lists. Select what you show; every event reads the feed as it stands then.',
    subscribe: (_root, _args, { openSubscription }) =>
      openSubscription({
        field: 'statusPageChanged',
        documents: FEED_DOCUMENTS,
        accept: (event) => event.type === 'page',
        startWithPage: true,
      }),
    resolve: (item, _args, { statusFeed }) => {
      changeOf(item);
      return statusFeed.summary();
    },
  }),
);
