import {
  COMPONENT_STATUS_SEVERITY,
  INDICATOR_SEVERITY,
  type Maintenance,
  type StatusSummary,
} from '../core/status/model.js';
import { builder } from './builder.js';
import { ComponentRef } from './component.js';
import { reportedBeside } from './context.js';
import { IncidentRef } from './incident.js';
import { MaintenanceRef } from './maintenance.js';
import { readSummaries, StatusIndicatorEnum } from './page.js';
import { PageRef, type PageSource } from './page-ref.js';
import { namedPages, pageSlugsOf, SLUGS_ARGUMENT, TAGS_ARGUMENT } from './page-slugs.js';

const ACTIVE_MAINTENANCE = new Set<Maintenance['status']>(['IN_PROGRESS', 'VERIFYING']);

/**
 * What several pages show at a glance, built once from their summaries (the last known one of a
 * page that did not answer in time); `unreachablePages` did not answer.
 */
function overviewOf(
  pages: readonly PageSource[],
  summaries: readonly StatusSummary[],
  unreachablePages: readonly PageSource[],
) {
  return {
    complete: unreachablePages.length === 0,
    unreachablePages,
    indicator:
      summaries
        .map(({ status }) => status.indicator)
        .sort((a, b) => INDICATOR_SEVERITY[b] - INDICATOR_SEVERITY[a])[0] ?? 'NONE',
    pages,
    // A stable sort: within a status, pages stay in configuration order, components by position.
    degradedComponents: summaries
      .flatMap(({ components }) =>
        components.filter(({ isGroup, status }) => !isGroup && status !== 'OPERATIONAL'),
      )
      .sort((a, b) => COMPONENT_STATUS_SEVERITY[b.status] - COMPONENT_STATUS_SEVERITY[a.status]),
    unresolvedIncidents: summaries.flatMap(({ incidents }) => incidents),
    activeMaintenances: summaries.flatMap(({ maintenances }) =>
      maintenances.filter(({ status }) => ACTIVE_MAINTENANCE.has(status)),
    ),
  };
}

type StatusOverview = ReturnType<typeof overviewOf>;

const StatusOverviewRef = builder.objectRef<StatusOverview>('StatusOverview').implement({
  readsStatusSnapshots: true,
  description:
    'Everything watched at a glance: the worst indicator across the pages, and what is not operational, worst first.',
  fields: (t) => ({
    complete: t.exposeBoolean('complete', {
      description:
        'Whether every page answered in time: when false, `unreachablePages` did not, and what the overview says of them is their last known state, or nothing when they never answered.',
    }),
    unreachablePages: t.expose('unreachablePages', {
      type: [PageRef],
      description:
        'The pages whose feeds did not answer within `STATUS_OVERVIEW_DEADLINE_MS`, or fail: each with `reachable: false` and `lastSeenAt`. Those seen before are in `pages` too, with their last known state; one never seen is only here (select what its configuration answers: `slug`, `name`, `tags`).',
    }),
    indicator: t.expose('indicator', {
      type: StatusIndicatorEnum,
      description:
        'The worst indicator of the pages, as they answered or were last seen (CRITICAL, MAJOR, MINOR, MAINTENANCE, UNKNOWN, NONE, worst first).',
    }),
    pages: t.expose('pages', {
      type: [PageRef],
      description:
        'The pages the overview is made of, in configuration order: those that answered, and those that did not but were seen before (their last known state). One never seen is left out, with an error naming it.',
    }),
    degradedComponents: t.expose('degradedComponents', {
      type: [ComponentRef],
      description:
        'Components (not groups) that are not operational, worst status first, then by page in configuration order and position. `page` says whose.',
    }),
    unresolvedIncidents: t.expose('unresolvedIncidents', {
      type: [IncidentRef],
      description: "The pages' unresolved incidents, by page in configuration order.",
    }),
    activeMaintenances: t.expose('activeMaintenances', {
      type: [MaintenanceRef],
      description: "The pages' maintenances in progress or being verified, by page.",
    }),
  }),
});

builder.queryField('statusOverview', (t) =>
  t.field({
    readsStatusSnapshots: true,
    readsPages: namedPages('all', { readsThem: true }),
    type: StatusOverviewRef,
    description:
      "Everything watched at a glance: the worst indicator across the pages, and what is not operational, worst first. Every configured page, or those `slugs` and `tags` name (with the operation's other pages, at most `MAX_PAGES_PER_OPERATION`, 50 unless configured). It waits at most `STATUS_OVERVIEW_DEADLINE_MS` for any page: `complete` says whether all answered, `unreachablePages` which did not; a page never seen is left out, with an error naming it.",
    args: { slugs: t.arg.stringList(SLUGS_ARGUMENT), tags: t.arg.stringList(TAGS_ARGUMENT) },
    resolve: async (_root, selection, context, info) => {
      const slugs = pageSlugsOf(selection, context.statusPages.registry, { whenNone: 'all' });
      const read = await readSummaries(slugs, context);
      const pages: PageSource[] = [];
      const summaries: StatusSummary[] = [];
      const unreachable: PageSource[] = [];
      for (const page of read) {
        if (page.read) {
          pages.push({ slug: page.slug });
          summaries.push(page.read.value);
          if (page.read.stale) unreachable.push({ slug: page.slug });
        } else {
          unreachable.push({ slug: page.slug });
          reportedBeside(context, info.path, { slug: page.slug })(page.failure);
        }
      }
      return overviewOf(pages, summaries, unreachable);
    },
  }),
);
