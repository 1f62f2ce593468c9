import {
  type INCIDENT_CHANGE_KINDS,
  type IncidentChangeEvent,
  incidentOf,
} from '../core/status/change-event.js';
import { changeOf } from '../subscriptions/subscription-registry.js';
import { builder } from './builder.js';
import { IncidentRef } from './incident.js';
import { PageRef } from './page-ref.js';
import { MAX_PAGES_PER_FIELD, pageSlugsOf } from './page-slugs.js';

export const IncidentChangeKindEnum = builder.enumType('IncidentChangeKind', {
  description: 'What happened to an incident.',
  values: {
    CREATED: { description: 'It was posted: the page lists it among its unresolved incidents.' },
    UPDATED: {
      description: 'It changed: a new update, a new status short of resolved, its impact or name.',
    },
    RESOLVED: {
      description:
        "It left the page's unresolved incidents. `incident` is its resolved copy from the incident history (with `resolvedAt`) where the feed serves one, else its last copy.",
    },
  } satisfies Record<(typeof INCIDENT_CHANGE_KINDS)[number], { description: string }>,
});

export const IncidentChangeRef = builder
  .objectRef<IncidentChangeEvent>('IncidentChange')
  .implement({
    description: 'An incident was posted, updated or resolved.',
    fields: (t) => ({
      incident: t.field({
        type: IncidentRef,
        description: 'The incident as the feed showed it at the change.',
        resolve: (event) => incidentOf(event.incident),
      }),
      page: t.field({
        type: PageRef,
        description: 'The status page that lists it.',
        resolve: (event) => ({ slug: event.incident.pageSlug }),
      }),
      kind: t.field({
        type: IncidentChangeKindEnum,
        description: 'What happened to it.',
        resolve: (event) => event.kind,
      }),
      detectedAt: t.field({
        type: 'DateTime',
        description:
          'When the gateway fetched the copy of the feed that showed the change (`incident.updatedAt` says when the page changed it).',
        resolve: (event) => new Date(event.detectedAt),
      }),
    }),
  });

builder.subscriptionField('incidentChanged', (t) =>
  t.field({
    type: IncidentChangeRef,
    description: 'An incident was posted, updated or resolved.',
    args: {
      slugs: t.arg.stringList({
        required: false,
        description: `The pages to follow, at most ${MAX_PAGES_PER_FIELD}. Omit for the default page.`,
      }),
    },
    subscribe: (_root, { slugs }, { openSubscription, statusPages }) =>
      openSubscription({
        field: 'incidentChanged',
        pages: pageSlugsOf(slugs, statusPages.registry, { whenNone: 'default' }),
        documents: ['summary', 'incidentHistory'],
        accept: (event) => event.type === 'incident',
      }),
    resolve: (item) => changeOf<IncidentChangeEvent>(item),
  }),
);
