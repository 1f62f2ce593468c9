import { type ComponentStatusChangeEvent, componentOf } from '../core/status/change-event.js';
import { InvalidInputError } from '../errors/invalid-input-error.js';
import { changeOf } from '../subscriptions/hub.js';
import { builder } from './builder.js';
import { ComponentRef, ComponentStatusEnum } from './component.js';
import type { StatusPagesLoaders } from './context.js';
import { PageRef } from './page-ref.js';
import { FOLLOWED_SLUGS, namedPages, pageSlugsOf, TAGS_ARGUMENT } from './page-slugs.js';
import { SINCE_ARGUMENT } from './since-argument.js';

/** Component ids one `componentStatusChanged` may name: a page has tens, a large one hundreds. */
const MAX_IDS = 500;
/** Statuspage ids are 12 characters; anything much longer is not an id. */
const MAX_ID_LENGTH = 64;

const ComponentStatusChangeRef = builder
  .objectRef<ComponentStatusChangeEvent>('ComponentStatusChange')
  .implement({
    description: "A component's status changed between two reads of the feed.",
    fields: (t) => ({
      component: t.field({
        type: ComponentRef,
        description:
          'The component, with its new status. Its `group` and `children` are those of the page now; a component the page no longer lists comes without them.',
        resolve: async (event, _args, { statusPages }) => {
          const node = await statusPages
            .of(event.component.pageSlug)
            .component.load(event.component.id)
            .catch(() => null);
          // The tree's node, unless the component changed again since: then the event's own copy.
          return node && node.status === event.status ? node : componentOf(event.component);
        },
      }),
      page: t.field({
        type: PageRef,
        description: 'The status page the component is on.',
        resolve: (event) => ({ slug: event.component.pageSlug }),
      }),
      previousStatus: t.expose('previousStatus', {
        type: ComponentStatusEnum,
        description: 'The status before the change.',
      }),
      status: t.expose('status', {
        type: ComponentStatusEnum,
        description: 'The status now.',
      }),
      detectedAt: t.field({
        type: 'DateTime',
        description:
          'When the gateway fetched the copy of the feed that showed the change; the change itself is at most `STATUS_POLL_INTERVAL_MS` older (see `component.updatedAt` for when the page says it happened).',
        resolve: (event) => new Date(event.detectedAt),
      }),
    }),
  });

builder.subscriptionField('componentStatusChanged', (t) =>
  t.field({
    type: ComponentStatusChangeRef,
    description:
      "A component's status changed. `ids` limits it to those components; a group's id covers its children.",
    args: {
      ids: t.arg.idList({
        required: false,
        description: `Only these components, and the children of the groups among them (at most ${MAX_IDS}). Omit for every component.`,
      }),
      slugs: t.arg.stringList(FOLLOWED_SLUGS),
      tags: t.arg.stringList(TAGS_ARGUMENT),
      since: t.arg({ type: 'DateTime', ...SINCE_ARGUMENT }),
    },
    readsPages: namedPages('default', { readsThem: true }),
    subscribe: async (
      _root,
      { ids, slugs, tags, since },
      { openSubscription, statusPages },
      info,
    ) => {
      const pages = pageSlugsOf({ slugs, tags }, statusPages.registry, { whenNone: 'default' });
      const wanted = ids ? await checkedIds(ids.map(String), pages, statusPages) : undefined;
      return openSubscription(
        {
          field: 'componentStatusChanged',
          pages,
          documents: ['summary'],
          accept: (event) =>
            event.type === 'component' &&
            (!wanted ||
              wanted.has(event.component.id) ||
              (event.component.groupId !== null && wanted.has(event.component.groupId))),
        },
        { at: since, info },
      );
    },
    resolve: (item) => changeOf<ComponentStatusChangeEvent>(item),
  }),
);

/**
 * The ids, checked: few enough, each id-shaped, and each known to one of the pages when they can
 * be read.
 */
async function checkedIds(
  ids: readonly string[],
  pages: readonly string[],
  statusPages: StatusPagesLoaders,
): Promise<Set<string>> {
  if (ids.length > MAX_IDS) {
    throw new InvalidInputError(
      'ids',
      `Name at most ${MAX_IDS} component ids (got ${ids.length}).`,
    );
  }
  const malformed = ids.find((id) => id.length === 0 || id.length > MAX_ID_LENGTH);
  if (malformed !== undefined) {
    throw new InvalidInputError(
      'ids',
      `A component id is 1 to ${MAX_ID_LENGTH} characters; one of ids is ${malformed.length}.`,
    );
  }
  // While a page cannot be read, the ids are taken as given: a subscription is for later.
  const known = await Promise.all(
    pages.map(async (slug) => (await statusPages.of(slug).summary()).value.componentsById),
  ).catch(() => undefined);
  const unknown = known ? ids.filter((id) => !known.some((byId) => byId.has(id))) : [];
  if (unknown.length > 0) {
    throw new InvalidInputError(
      'ids',
      `The page has no component ${unknown
        .slice(0, 5)
        .map((id) => JSON.stringify(id))
        .join(', ')}${unknown.length > 5 ? ` (and ${unknown.length - 5} more)` : ''}.`,
    );
  }
  return new Set(ids);
}
