import {
  type MAINTENANCE_CHANGE_KINDS,
  type MaintenanceChangeEvent,
  maintenanceOf,
} from '../core/status/change-event.js';
import { changeOf } from '../subscriptions/subscription-registry.js';
import { builder } from './builder.js';
import { MaintenanceRef } from './maintenance.js';
import { PageRef } from './page-ref.js';
import { MAX_PAGES_PER_FIELD, pageSlugsOf } from './page-slugs.js';

export const MaintenanceChangeKindEnum = builder.enumType('MaintenanceChangeKind', {
  description: 'What happened to a maintenance.',
  values: {
    SCHEDULED: {
      description:
        'It was announced: the page lists it as scheduled (in its summary or upcoming list).',
    },
    STARTED: { description: 'It began: its status moved to in progress.' },
    UPDATED: {
      description: 'It changed otherwise: a new update, its window, verifying, its name or impact.',
    },
    COMPLETED: {
      description:
        'It is over: its status is completed. `maintenance` is its copy from the maintenance history where the feed serves one.',
    },
  } satisfies Record<(typeof MAINTENANCE_CHANGE_KINDS)[number], { description: string }>,
});

export const MaintenanceChangeRef = builder
  .objectRef<MaintenanceChangeEvent>('MaintenanceChange')
  .implement({
    description: 'A maintenance was scheduled, started, updated or completed.',
    fields: (t) => ({
      maintenance: t.field({
        type: MaintenanceRef,
        description: 'The maintenance as the feed showed it at the change.',
        resolve: (event) => maintenanceOf(event.maintenance),
      }),
      page: t.field({
        type: PageRef,
        description: 'The status page that lists it.',
        resolve: (event) => ({ slug: event.maintenance.pageSlug }),
      }),
      kind: t.field({
        type: MaintenanceChangeKindEnum,
        description: 'What happened to it.',
        resolve: (event) => event.kind,
      }),
      detectedAt: t.field({
        type: 'DateTime',
        description:
          'When the gateway fetched the copy of the feed that showed the change (`maintenance.updatedAt` says when the page changed it).',
        resolve: (event) => new Date(event.detectedAt),
      }),
    }),
  });

builder.subscriptionField('maintenanceChanged', (t) =>
  t.field({
    type: MaintenanceChangeRef,
    description: 'A maintenance was scheduled, started, updated or completed.',
    args: {
      slugs: t.arg.stringList({
        required: false,
        description: `The pages to follow, at most ${MAX_PAGES_PER_FIELD}. Omit for the default page.`,
      }),
    },
    subscribe: (_root, { slugs }, { openSubscription, statusPages }) =>
      openSubscription({
        field: 'maintenanceChanged',
        pages: pageSlugsOf(slugs, statusPages.registry, { whenNone: 'default' }),
        documents: ['summary', 'upcoming', 'maintenanceHistory'],
        accept: (event) => event.type === 'maintenance',
      }),
    resolve: (item) => changeOf<MaintenanceChangeEvent>(item),
  }),
);
