import type { Incident } from '../core/status/model.js';
import { InvalidInputError } from '../errors/invalid-input-error.js';
import { UpstreamUnavailableError } from '../errors/upstream-unavailable-error.js';
import type { StatusFeed } from '../upstreams/status-feed/status-feed.js';
import { builder } from './builder.js';
import { connectionOf } from './connection.js';
import { type GatewayContext, reportedBeside } from './context.js';
import { IncidentRef } from './incident.js';
import { readSummaries } from './page.js';
import {
  namedPages,
  type PageSelection,
  pageSlugsOf,
  SLUGS_ARGUMENT,
  TAGS_ARGUMENT,
} from './page-slugs.js';
import { configurationOnly } from './plugins/page-budget.js';

/*
 * Recent incidents across pages, newest first, as an aggregator's incident feed serves them: each
 * page's unresolved incidents (its summary) and its 50 most recent (incidents.json), each once.
 */

/** `first` when the client does not say, and at most. */
const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;

/** Newest first: by creation, then by page in configuration order, then by id. */
type Position = readonly [createdAt: number, pageIndex: number, id: string];

const compare = (a: Position, b: Position) =>
  b[0] - a[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0);

/** A cursor is an incident's position, opaque. */
const cursorOf = ([createdAt, , id]: Position, slug: string) =>
  Buffer.from(JSON.stringify([createdAt, slug, id])).toString('base64url');

function positionOf(cursor: string, pageIndex: (slug: string) => number): Position {
  try {
    const [createdAt, slug, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [
      unknown,
      unknown,
      unknown,
    ];
    if (typeof createdAt === 'number' && typeof slug === 'string' && typeof id === 'string') {
      return [createdAt, pageIndex(slug), id];
    }
  } catch {
    // Not one of ours: refused below.
  }
  throw new InvalidInputError('after', 'after is not a cursor of incidents: pass an endCursor.');
}

const IncidentConnectionRef = connectionOf('Incident', IncidentRef, {
  readsStatusSnapshots: true,
  readsPages: configurationOnly,
  description: 'A slice of the incidents of several pages, newest first.',
  edge: 'An incident of the list, with its cursor.',
  after: 'the incidents older than this one',
  items: 'incidents',
  totalCount:
    'How many incidents the pages that answered list (created at or after `since`), in all.',
});

/**
 * Every incident of `slugs` created at or after `since`, newest first, each once (the copy
 * updated last, where the summary and the history both list it). A page whose summary or history
 * cannot be read within `STATUS_OVERVIEW_DEADLINE_MS` is reported beside the data; its last known
 * documents stand in where there are any.
 */
async function incidentsOf(
  slugs: readonly string[],
  since: Date | null | undefined,
  context: GatewayContext,
  path: Parameters<typeof reportedBeside>[1],
): Promise<(readonly [Position, Incident])[]> {
  const { statusPages } = context;
  const deadlineMs = statusPages.deadlineMs;
  const summaries = await readSummaries(slugs, context);
  const histories = await Promise.all(
    slugs.map((slug) =>
      withDeadline(statusPages.of(slug).incidentHistory(), deadlineMs, () =>
        unanswered(statusPages.of(slug), deadlineMs),
      ).then(
        (history) => history.value.events,
        (failure: unknown) => {
          // A page that serves no history (404: incident.io-hosted pages) has its summary alone.
          const serves = !(failure instanceof UpstreamUnavailableError && failure.status === 404);
          if (serves) reportedBeside(context, path, { slug })(failure);
          return [];
        },
      ),
    ),
  );
  const found: (readonly [Position, Incident])[] = [];
  for (const [index, page] of summaries.entries()) {
    if (page.failure !== undefined)
      reportedBeside(context, path, { slug: page.slug })(page.failure);
    const latest = new Map<string, Incident>();
    for (const incident of [...(page.read?.value.incidents ?? []), ...(histories[index] ?? [])]) {
      const known = latest.get(incident.id);
      if (!known || incident.updatedAt > known.updatedAt) latest.set(incident.id, incident);
    }
    for (const incident of latest.values()) {
      if (since && incident.createdAt < since) continue;
      found.push([[incident.createdAt.getTime(), index, incident.id], incident]);
    }
  }
  return found.sort(([a], [b]) => compare(a, b));
}

/** The failure of a history that did not answer within the deadline. */
const unanswered = (page: Pick<StatusFeed, 'name' | 'pathOf'>, ms: number) =>
  new UpstreamUnavailableError(
    { upstream: page.name, method: 'GET', path: page.pathOf('incidentHistory') },
    `no answer within ${ms} ms`,
  );

/** `read`, or the rejection `failure` makes when it has not settled within `ms`. */
function withDeadline<Value>(read: Promise<Value>, ms: number, failure: () => Error) {
  let timer: NodeJS.Timeout | undefined;
  read.catch(() => {});
  return Promise.race([
    read,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(failure()), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

builder.queryField('incidents', (t) =>
  t.field({
    readsStatusSnapshots: true,
    readsPages: namedPages('all', { readsThem: true }),
    type: IncidentConnectionRef,
    description: `Recent incidents across pages, newest first (by creation): each page's unresolved ones and its 50 most recent, resolved ones included, as a cursor connection (\`first\`, 1 to ${MAX_PAGE_SIZE}, ${DEFAULT_PAGE_SIZE} when left out, after the cursor \`after\`). Every configured page, or those \`slugs\` and \`tags\` name, counted against \`MAX_PAGES_PER_OPERATION\` with the operation's other pages; a page that cannot be read within \`STATUS_OVERVIEW_DEADLINE_MS\` is named by an error beside the data, and its last known summary stands in.`,
    args: {
      slugs: t.arg.stringList(SLUGS_ARGUMENT),
      tags: t.arg.stringList(TAGS_ARGUMENT),
      since: t.arg({
        type: 'DateTime',
        required: false,
        description: 'Only incidents created at or after this time.',
      }),
      first: t.arg.int({
        required: false,
        description: `How many incidents, 1 to ${MAX_PAGE_SIZE}; ${DEFAULT_PAGE_SIZE} when left out.`,
      }),
      after: t.arg.string({
        required: false,
        description: 'The `endCursor` of the slice before; the newest incidents when left out.',
      }),
    },
    resolve: async (_root, { slugs, tags, since, first, after }, context, info) => {
      const size = first ?? DEFAULT_PAGE_SIZE;
      if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
        throw new InvalidInputError('first', `first must be 1 to ${MAX_PAGE_SIZE}, not ${size}.`);
      }
      const selection: PageSelection = { slugs, tags };
      const pages = pageSlugsOf(selection, context.statusPages.registry, { whenNone: 'all' });
      const pageIndex = (slug: string) => {
        const index = pages.indexOf(slug);
        return index === -1 ? Number.MAX_SAFE_INTEGER : index;
      };
      const from = after ? positionOf(after, pageIndex) : undefined;
      const all = await incidentsOf(pages, since, context, info.path);
      const start = from ? all.findIndex(([position]) => compare(from, position) < 0) : 0;
      const rest = start === -1 ? [] : all.slice(start);
      const edges = rest.slice(0, size).map(([position, node]) => ({
        cursor: cursorOf(position, node.pageSlug),
        node,
      }));
      return {
        edges,
        totalCount: all.length,
        pageInfo: {
          hasNextPage: rest.length > size,
          hasPreviousPage: start > 0,
          startCursor: edges[0]?.cursor ?? null,
          endCursor: edges.at(-1)?.cursor ?? null,
        },
      };
    },
  }),
);
