import {
  eventOf,
  type IncidentChangeEvent,
  type MaintenanceChangeEvent,
  pageSlugOf,
} from '../core/status/change-event.js';
import { changeOf } from '../subscriptions/hub.js';
import type { FeedDocument } from '../upstreams/status-feed/status-feed.js';
import { builder } from './builder.js';
import { IncidentRef } from './incident.js';
import { MaintenanceRef } from './maintenance.js';
import { PageRef } from './page-ref.js';
import { FOLLOWED_SLUGS, namedPages, pageSlugsOf, TAGS_ARGUMENT } from './page-slugs.js';
import { SINCE_ARGUMENT } from './since-argument.js';

type StatusEventChange = IncidentChangeEvent | MaintenanceChangeEvent;

/** `<Entity>Change` (`IncidentChange`), its kind enum and its subscription `<type>Changed`. */
function defineChange<Type extends StatusEventChange['type']>(
  type: Type,
  options: {
    readonly entity: typeof IncidentRef | typeof MaintenanceRef;
    readonly description: string;
    readonly kindDescription: string;
    readonly kinds: Record<
      Extract<StatusEventChange, { type: Type }>['kind'],
      { description: string }
    >;
    readonly documents: readonly FeedDocument[];
  },
): void {
  const name = `${options.entity.name}Change`;
  const field = `${type}Changed` as const;
  const kindEnum = builder.enumType(`${name}Kind`, {
    description: options.kindDescription,
    values: options.kinds as Record<string, { description: string }>,
  });
  const changeRef = builder.objectRef<StatusEventChange>(name).implement({
    description: options.description,
    fields: (t) => ({
      [type]: t.field({
        type: options.entity,
        description: `The ${type} as the feed showed it at the change.`,
        resolve: (event) =>
          event.type === 'incident' ? eventOf(event.incident) : eventOf(event.maintenance),
      }),
      page: t.field({
        type: PageRef,
        description: 'The status page that lists it.',
        resolve: (event) => ({ slug: pageSlugOf(event) }),
      }),
      kind: t.expose('kind', {
        type: kindEnum,
        description: 'What happened to it.',
      }),
      detectedAt: t.field({
        type: 'DateTime',
        description: `When the gateway fetched the copy of the feed that showed the change (\`${type}.updatedAt\` says when the page changed it).`,
        resolve: (event) => new Date(event.detectedAt),
      }),
    }),
  });
  builder.subscriptionField(field, (t) =>
    t.field({
      type: changeRef,
      description: options.description,
      args: {
        slugs: t.arg.stringList(FOLLOWED_SLUGS),
        tags: t.arg.stringList(TAGS_ARGUMENT),
        since: t.arg({ type: 'DateTime', ...SINCE_ARGUMENT }),
      },
      readsPages: namedPages('default', { readsThem: true }),
      subscribe: (_root, { slugs, tags, since }, { openSubscription, statusPages }, info) =>
        openSubscription(
          {
            field,
            pages: pageSlugsOf({ slugs, tags }, statusPages.registry, { whenNone: 'default' }),
            documents: options.documents,
            accept: (event) => event.type === type,
          },
          { at: since, info },
        ),
      resolve: (item) => changeOf<StatusEventChange>(item),
    }),
  );
}

defineChange('incident', {
  entity: IncidentRef,
  description: 'An incident was posted, updated or resolved.',
  kindDescription: 'What happened to an incident.',
  kinds: {
    CREATED: { description: 'It was posted: the page lists it among its unresolved incidents.' },
    UPDATED: {
      description: 'It changed: a new update, a new status short of resolved, its impact or name.',
    },
    RESOLVED: {
      description:
        "It left the page's unresolved incidents. `incident` is its resolved copy from the incident history (with `resolvedAt`) where the feed serves one, else its last copy.",
    },
  },
  documents: ['summary', 'incidentHistory'],
});

defineChange('maintenance', {
  entity: MaintenanceRef,
  description: 'A maintenance was scheduled, started, updated or completed.',
  kindDescription: 'What happened to a maintenance.',
  kinds: {
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
  },
  documents: ['summary', 'upcoming', 'maintenanceHistory'],
});
