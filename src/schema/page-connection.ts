import { InvalidInputError } from '../errors/invalid-input-error.js';
import { builder } from './builder.js';
import { connectionOf, type PageInfo } from './connection.js';
import { readSummaries } from './page.js';
import { PageRef } from './page-ref.js';
import { configurationOnly, type PageDirectory, pagesReadBelow } from './plugins/page-budget.js';

/*
 * The configured pages as a list to walk, filter by tag and search, as an aggregator does with
 * hundreds or thousands of them: what their configuration answers costs nothing, and what is read
 * from their feeds counts against the operation's page budget like any other field's.
 */

/** `first` when the client does not say, and at most. */
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;
/** The longest `search` taken: a page's name is at most 200 characters. */
const MAX_SEARCH_LENGTH = 200;

interface PagesArgs {
  readonly first?: number | null | undefined;
  readonly after?: string | null | undefined;
  readonly tags?: readonly string[] | null | undefined;
  readonly search?: string | null | undefined;
}

/** One page of the list: its pages' slugs, and where it is in the whole list. */
interface PageSlice {
  readonly slugs: readonly string[];
  readonly totalCount: number;
  readonly pageInfo: PageInfo;
}

/** A cursor names the page it follows: its slug, opaque. */
const cursorOf = (slug: string) => Buffer.from(`page:${slug}`).toString('base64url');

function slugOf(cursor: string): string | undefined {
  const decoded = Buffer.from(cursor, 'base64url').toString();
  return decoded.startsWith('page:') ? decoded.slice(5) : undefined;
}

/**
 * The slice `args` asks for of the configured pages, in configuration order: those carrying any of
 * `tags` and whose slug or name holds `search` (any case), `first` of them after the page `after`
 * names. What the field resolves and what its `readsPages` counts, alike.
 */
function sliceOf({ first, after, tags, search }: PagesArgs, pages: PageDirectory): PageSlice {
  const size = first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw new InvalidInputError('first', `first must be 1 to ${MAX_PAGE_SIZE}, not ${size}.`);
  }
  if (search && search.length > MAX_SEARCH_LENGTH) {
    throw new InvalidInputError('search', `search is at most ${MAX_SEARCH_LENGTH} characters.`);
  }
  const tagged = tags ? new Set(tags) : undefined;
  const needle = search?.toLowerCase();
  const listed = pages.configs.filter(
    (page) =>
      (!tagged || page.tags.some((tag) => tagged.has(tag))) &&
      (!needle ||
        page.slug.includes(needle) ||
        (page.name?.toLowerCase().includes(needle) ?? false)),
  );
  let start = 0;
  if (after) {
    const slug = slugOf(after);
    start = listed.findIndex((page) => page.slug === slug) + 1;
    if (start === 0) {
      throw new InvalidInputError(
        'after',
        'after names no page of this list (it may have been removed from the configuration): start again without it.',
      );
    }
  }
  const slugs = listed.slice(start, start + size).map((page) => page.slug);
  const last = slugs.at(-1);
  return {
    slugs,
    totalCount: listed.length,
    pageInfo: {
      hasNextPage: start + size < listed.length,
      hasPreviousPage: start > 0,
      startCursor: slugs[0] === undefined ? null : cursorOf(slugs[0]),
      endCursor: last === undefined ? null : cursorOf(last),
    },
  };
}

const PageConnectionRef = connectionOf('Page', PageRef, {
  readsPages: configurationOnly,
  description: 'A slice of the configured status pages, in configuration order.',
  edge: 'A configured page of the list, with its cursor.',
  after: 'the pages after this one',
  items: 'pages',
  nullNode:
    'The page. Null, with an error naming it, when a field selected of it cannot answer without its feed and the feed never answered (within `STATUS_OVERVIEW_DEADLINE_MS`); a page seen before shows its last known state instead (`reachable: false`), and `slug`, `name`, `tags`, `reachable` and `lastSeenAt` always answer.',
  totalCount: 'How many configured pages the list has (its `tags` and `search` applied).',
});

builder.queryField('pages', (t) =>
  t.field({
    type: PageConnectionRef,
    description: `The configured status pages, in configuration order, as a cursor connection: \`first\` (1 to ${MAX_PAGE_SIZE}, ${DEFAULT_PAGE_SIZE} when left out) after the cursor \`after\`, those carrying any of \`tags\`, whose slug or name holds \`search\`. What their configuration answers (\`slug\`, \`name\`, \`tags\`, \`chains\`) costs nothing; the fields that read their feeds count them against \`MAX_PAGES_PER_OPERATION\` (50 unless configured), with the operation's other pages.`,
    args: {
      first: t.arg.int({
        required: false,
        description: `How many pages, 1 to ${MAX_PAGE_SIZE}; ${DEFAULT_PAGE_SIZE} when left out.`,
      }),
      after: t.arg.string({
        required: false,
        description: 'The `endCursor` of the slice before; the first pages when left out.',
      }),
      tags: t.arg.stringList({
        required: false,
        description: 'Only the pages carrying any of these tags.',
      }),
      search: t.arg.string({
        required: false,
        description: `Only the pages whose slug or configured name holds this text, in any case (at most ${MAX_SEARCH_LENGTH} characters).`,
      }),
    },
    // A slice the arguments refuse reads nothing: the resolver says why.
    readsPages: (args, pages) => {
      try {
        return { scope: sliceOf(args, pages).slugs, reads: [] };
      } catch {
        return { scope: [], reads: [] };
      }
    },
    resolve: async (_root, args, context, info) => {
      const { registry } = context.statusPages;
      const { slugs, totalCount, pageInfo } = sliceOf(args, registry);
      // Every page whose feed is selected is waited for at most the deadline; a field that cannot
      // answer without it makes its node null, the others answer.
      await readSummaries([...pagesReadBelow(info, registry, slugs)], context);
      return {
        edges: slugs.map((slug) => ({ cursor: cursorOf(slug), node: { slug } })),
        totalCount,
        pageInfo,
      };
    },
  }),
);
