import type { GraphQLResolveInfo } from 'graphql';
import type { PageStatus, StatusSummary } from '../core/status/model.js';
import { pageOf } from '../subscriptions/hub.js';
import type { Snapshot } from '../upstreams/snapshot-cache.js';
import { FEED_DOCUMENTS } from '../upstreams/status-feed/status-feed.js';
import { builder } from './builder.js';
import { ComponentRef, ComponentStatusEnum } from './component.js';
import { type GatewayContext, reportedBeside } from './context.js';
import { IncidentRef } from './incident.js';
import { MaintenanceRef } from './maintenance.js';
import { PageRef, type PageSource, summaryOf } from './page-ref.js';
import {
  FOLLOWED_SLUGS,
  namedPage,
  namedPages,
  type PageSelection,
  pageSlugsOf,
  SLUGS_ARGUMENT,
  TAGS_ARGUMENT,
} from './page-slugs.js';
import { configurationOnly, pagesReadBelow } from './plugins/page-budget.js';

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
  readsStatusSnapshots: true,
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

PageRef.implement({
  readsStatusSnapshots: true,
  description:
    'A configured status page: its overall status, its components and what is going on with them.',
  fields: (t) => ({
    slug: t.exposeString('slug', {
      readsPages: configurationOnly,
      description:
        'The slug the gateway configuration gives the page (`default` when it serves one page); pass it as `slug` or in `slugs`.',
    }),
    tags: t.stringList({
      readsStatusSnapshots: true,
      readsPages: configurationOnly,
      description:
        'The tags the gateway configuration gives the page (`STATUS_PAGES_FILE`), in its order: pass them as `tags` to list, sum up or follow the pages that carry them.',
      resolve: (page, _args, context) => context.statusPages.registry.config(page.slug).tags,
    }),
    reachable: t.boolean({
      readsStatusSnapshots: true,
      description:
        "Whether the page's feed answered: false while it fails, or when it did not answer a list or an overview within `STATUS_OVERVIEW_DEADLINE_MS`. The page then shows its last known state (`stale`, as of `lastSeenAt`).",
      resolve: async (page, _args, context) =>
        summaryOf(page, context).then(
          (snapshot) => !snapshot.stale,
          () => false,
        ),
    }),
    lastSeenAt: t.field({
      readsStatusSnapshots: true,
      type: 'DateTime',
      nullable: true,
      description:
        "When the gateway last got an answer from the page's feed: `fetchedAt` of what the page shows. Null when it never answered.",
      resolve: async (page, _args, context) =>
        summaryOf(page, context).then(
          (snapshot) => snapshot.fetchedAt,
          () => null,
        ),
    }),
    id: t.id({
      readsStatusSnapshots: true,
      description: 'Identifier of the status page.',
      resolve: async (page, _args, context) => (await summaryOf(page, context)).value.page.id,
    }),
    name: t.string({
      readsStatusSnapshots: true,
      // A configured name costs nothing; without one, the page's own is read from its feed.
      readsPages: (_args, pages, scope) => ({
        reads: scope.filter((slug) => pages.has(slug) && pages.config(slug).name === undefined),
      }),
      description:
        'Name of the status page, e.g. "Ledger Network Status": the `name` the gateway configuration gives it, else the one the page gives itself (its `slug` while it has never answered).',
      resolve: async (page, _args, context) =>
        context.statusPages.registry.config(page.slug).name ??
        summaryOf(page, context).then(
          (snapshot) => snapshot.value.page.name,
          // A page that never answered (`StatusOverview.unreachablePages`) has no name of its own.
          () => page.slug,
        ),
    }),
    url: t.field({
      readsStatusSnapshots: true,
      type: 'URL',
      description: 'Address of the human-readable status page; link to it for details.',
      resolve: async (page, _args, context) => (await summaryOf(page, context)).value.page.url,
    }),
    timeZone: t.string({
      readsStatusSnapshots: true,
      nullable: true,
      description:
        'The time zone the page shows times in, as an IANA name, e.g. `Etc/UTC`. Null when the feed does not say.',
      resolve: async (page, _args, context) => (await summaryOf(page, context)).value.page.timeZone,
    }),
    updatedAt: t.field({
      readsStatusSnapshots: true,
      type: 'DateTime',
      description: 'When anything on the page last changed.',
      resolve: async (page, _args, context) =>
        (await summaryOf(page, context)).value.page.updatedAt,
    }),
    fetchedAt: t.field({
      readsStatusSnapshots: true,
      type: 'DateTime',
      description:
        'When the gateway fetched this data from the status feed, or last had the feed confirm it unchanged (a 304). Show it as "as of …"; while the feed is down it can lag behind by a few minutes.',
      resolve: async (page, _args, context) => (await summaryOf(page, context)).fetchedAt,
    }),
    stale: t.boolean({
      readsStatusSnapshots: true,
      description:
        'True while the status feed cannot be reached and this is the last good copy (see `fetchedAt` for its age). Show a "data may be out of date" hint.',
      resolve: async (page, _args, context) => (await summaryOf(page, context)).stale,
    }),
    status: t.field({
      readsStatusSnapshots: true,
      type: PageStatusRef,
      description: 'The overall status: indicator and banner text.',
      resolve: async (page, _args, context) => (await summaryOf(page, context)).value.status,
    }),
    components: t.field({
      readsStatusSnapshots: true,
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
      resolve: async (page, { status, topLevel }, context) => {
        const { value } = await summaryOf(page, context);
        const components = topLevel ? value.topLevelComponents : value.components;
        if (!status) return components;
        const wanted = new Set(status);
        return components.filter((component) => wanted.has(component.status));
      },
    }),
    incidents: t.field({
      readsStatusSnapshots: true,
      type: [IncidentRef],
      description: 'Unresolved incidents, as the page lists them. Empty when all is well.',
      resolve: async (page, _args, context) => (await summaryOf(page, context)).value.incidents,
    }),
    scheduledMaintenances: t.field({
      readsStatusSnapshots: true,
      type: [MaintenanceRef],
      description:
        'Maintenances that are in progress or scheduled, as the page summary lists them.',
      resolve: async (page, _args, context) => (await summaryOf(page, context)).value.maintenances,
    }),
    upcomingMaintenances: t.field({
      readsStatusSnapshots: true,
      type: [MaintenanceRef],
      nullable: true,
      description:
        "Maintenances scheduled to start later, from the feed's list of upcoming maintenances. It can reach further ahead than `scheduledMaintenances`. Null, with an error naming the document, when the feed does not serve that list: the rest of the page still answers.",
      resolve: async (page, _args, { statusPages }) =>
        (await statusPages.of(page.slug).upcoming()).value.maintenances,
    }),
    incidentHistory: t.field({
      readsStatusSnapshots: true,
      type: [IncidentRef],
      nullable: true,
      description:
        'The page\'s recent incidents, resolved ones included (its 50 most recent), most recent first: what a status page shows under "Past incidents". Null, with an error naming the document, when the feed does not serve its history.',
      resolve: async (page, _args, { statusPages }) =>
        (await statusPages.of(page.slug).incidentHistory()).value.events,
    }),
    maintenanceHistory: t.field({
      readsStatusSnapshots: true,
      type: [MaintenanceRef],
      nullable: true,
      description:
        "The page's recent maintenances, completed ones included (its 50 most recent), latest window first. Null, with an error naming the document, when the feed does not serve its history.",
      resolve: async (page, _args, { statusPages }) =>
        (await statusPages.of(page.slug).maintenanceHistory()).value.events,
    }),
  }),
});

builder.asEntity(PageRef, {
  // By `id`, the default page (the key before there were several); by `slug`, any configured one.
  key: [builder.selection<{ id: string }>('id'), builder.selection<{ slug: string }>('slug')],
  resolveReference: async (representation, { statusPages }) => {
    if ('slug' in representation) {
      return statusPages.registry.has(representation.slug) ? { slug: representation.slug } : null;
    }
    const snapshot = await statusPages.of().summary();
    return snapshot.value.page.id === representation.id ? { slug: snapshot.value.page.slug } : null;
  },
});

/** Page `slug`, read first, so that a page whose feed is down fails as one whole page. */
async function readPage(
  slug: string,
  context: Pick<GatewayContext, 'statusPages'>,
): Promise<PageSource> {
  await summaryOf({ slug }, context);
  return { slug };
}

builder.queryField('statusPage', (t) =>
  t.field({
    readsStatusSnapshots: true,
    readsPages: namedPage,
    type: PageRef,
    description:
      'One status page by its configured slug; without one, the default page (the first configured). An unknown slug is `BAD_USER_INPUT`. Fails with `UPSTREAM_UNAVAILABLE` or `UPSTREAM_BAD_RESPONSE` only when the feed is down and no recent copy is on hand.',
    args: {
      slug: t.arg.string({
        required: false,
        description: "The page's `slug`, as `statusPages` lists them. Omit for the default page.",
      }),
    },
    resolve: (_root, { slug }, context) =>
      readPage(slug ?? context.statusPages.registry.defaultSlug, context),
  }),
);

builder.queryField('statusPages', (t) =>
  t.field({
    readsStatusSnapshots: true,
    readsPages: namedPages('all'),
    type: [PageRef],
    description:
      "Every configured page (or those `slugs` and `tags` name), in configuration order. What their configuration answers (`slug`, `name`, `tags`, `chains`) costs nothing; the fields that read their feeds count them against `MAX_PAGES_PER_OPERATION` (50 unless configured) with the operation's other pages. Each page's feed is waited for at most `STATUS_OVERVIEW_DEADLINE_MS`: one that has not answered by then shows its last known state (`reachable: false`), and one that never answered is left out, with an error beside the data naming its `slug`.",
    args: { slugs: t.arg.stringList(SLUGS_ARGUMENT), tags: t.arg.stringList(TAGS_ARGUMENT) },
    resolve: async (_root, selection, context, info) =>
      (await readPages(selection, context, info)).map(({ slug }) => ({ slug })),
  }),
);

/** A page of a list, as `readPages` read it: its summary, or why it has none. */
export type ReadPage =
  | { readonly slug: string; readonly read?: undefined; readonly failure?: undefined }
  | { readonly slug: string; readonly read: Snapshot<StatusSummary>; readonly failure?: undefined }
  | { readonly slug: string; readonly read?: undefined; readonly failure: unknown };

/**
 * The pages a list names, in configuration order. The summaries of those whose feeds what is
 * selected of them reads are read first, all at once (the pages of one host share its request slots,
 * `STATUS_FETCHES_PER_HOST`), waiting at most `STATUS_OVERVIEW_DEADLINE_MS` for any page: one
 * that has not answered by then shows its last known state, and one that never answered is left
 * out, reported beside the data (an error at the field naming its slug), so that one page's outage
 * never takes or holds up the others' answer. When only their configuration is selected, nothing
 * is read.
 */
export async function readPages(
  selection: PageSelection,
  context: Pick<GatewayContext, 'statusPages' | 'partialErrors'>,
  info: GraphQLResolveInfo,
  { slugs = pageSlugsOf(selection, context.statusPages.registry, { whenNone: 'all' }) } = {},
): Promise<ReadPage[]> {
  const below = pagesReadBelow(info, context.statusPages.registry, slugs);
  if (below.size === 0) return slugs.map((slug) => ({ slug }));
  const read = new Map(
    (await readSummaries([...below], context)).map((page) => [page.slug, page] as const),
  );
  const pages: ReadPage[] = [];
  for (const slug of slugs) {
    const page = read.get(slug) ?? { slug };
    if (page.failure === undefined) pages.push(page);
    else reportedBeside(context, info.path, { slug })(page.failure);
  }
  return pages;
}

/** Each page's summary, waiting at most `STATUS_OVERVIEW_DEADLINE_MS` for any (see `readPages`). */
export function readSummaries(
  slugs: readonly string[],
  { statusPages }: Pick<GatewayContext, 'statusPages'>,
): Promise<ReadPage[]> {
  return Promise.all(
    slugs.map((slug) =>
      statusPages
        .of(slug)
        .summaryWithin(statusPages.deadlineMs)
        .then(
          (read) => ({ slug, read }),
          (failure: unknown) => ({ slug, failure }),
        ),
    ),
  );
}

builder.subscriptionField('statusPageChanged', (t) =>
  t.field({
    type: PageRef,
    description:
      'The whole page, once on subscribe and again each time anything on it changes: its banner, a component, an incident or maintenance, or the upcoming and past lists. Select what you show; every event reads the feed as it stands then (its `fetchedAt` says as of when). With several `slugs`, each page comes on its own (see `slug`). Whoever joins subscribers of the same operation starts with the last state of each page.',
    args: {
      slugs: t.arg.stringList(FOLLOWED_SLUGS),
      tags: t.arg.stringList(TAGS_ARGUMENT),
      since: t.arg({
        type: 'DateTime',
        required: false,
        description:
          'Taken as every status subscription takes it (the `fetchedAt` of your query); the subscription begins with each page as it stands, which holds every change after it.',
      }),
    },
    readsPages: namedPages('default', { readsThem: true }),
    subscribe: (_root, { slugs, tags, since }, { openSubscription, statusPages }, info) =>
      openSubscription(
        {
          field: 'statusPageChanged',
          pages: pageSlugsOf({ slugs, tags }, statusPages.registry, { whenNone: 'default' }),
          documents: FEED_DOCUMENTS,
          accept: (event) => event.type === 'page',
          wholeState: true,
        },
        { at: since, info },
      ),
    resolve: (item, _args, context) => readPage(pageOf(item), context),
  }),
);
