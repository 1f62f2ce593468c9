import {
  COMPONENT_STATUS_SEVERITY,
  INDICATOR_SEVERITY,
  type Maintenance,
  type StatusSummary,
} from '../core/status/model.js';
import { builder } from './builder.js';
import { ComponentRef } from './component.js';
import { IncidentRef } from './incident.js';
import { MaintenanceRef } from './maintenance.js';
import { readPages, StatusIndicatorEnum } from './page.js';
import { PageRef, type PageSource, summaryOf } from './page-ref.js';
import { namedPages } from './page-slugs.js';

const ACTIVE_MAINTENANCE = new Set<Maintenance['status']>(['IN_PROGRESS', 'VERIFYING']);

/** What several pages show at a glance, built once from their summaries. */
function overviewOf(pages: readonly PageSource[], summaries: readonly StatusSummary[]) {
  return {
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
    indicator: t.expose('indicator', {
      type: StatusIndicatorEnum,
      description:
        'The worst indicator of the pages that answered (CRITICAL, MAJOR, MINOR, MAINTENANCE, UNKNOWN, NONE, worst first).',
    }),
    pages: t.expose('pages', {
      type: [PageRef],
      description: 'The pages read, in configuration order; one whose feed failed is left out.',
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
    readsPages: namedPages('all'),
    type: StatusOverviewRef,
    description: `Everything watched at a glance: the worst indicator across the pages, and what is not operational, worst first. Every configured page, or those \`slugs\` names (at most \`MAX_PAGES_PER_OPERATION\` pages across the operation (50 unless configured)); a page whose feed cannot be read is left out, with an error naming it.`,
    args: {
      slugs: t.arg.stringList({
        required: false,
        description: "The pages' slugs. Omit for every configured page.",
      }),
    },
    resolve: async (_root, { slugs }, context, info) => {
      const pages = await readPages(slugs, context, info.path);
      const summaries = await Promise.all(
        pages.map(async (page) => (await summaryOf(page, context)).value),
      );
      return overviewOf(pages, summaries);
    },
  }),
);
