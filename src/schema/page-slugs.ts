import { InvalidInputError } from '../errors/invalid-input-error.js';
import type { PageDirectory, ReadsPages } from './plugins/page-budget.js';

/** The arguments that name pages: by slug, by tag, or both (a page either names is taken). */
export interface PageSelection {
  readonly slugs?: readonly string[] | null | undefined;
  readonly tags?: readonly string[] | null | undefined;
}

/** A field's `slugs` argument. */
export const SLUGS_ARGUMENT = {
  required: false,
  description:
    "The pages' slugs. With `tags`, the pages either names; without either, every configured page.",
} as const;

/** A field's `tags` argument. */
export const TAGS_ARGUMENT = {
  required: false,
  description: 'The pages carrying any of these tags (`Page.tags`), beside those `slugs` names.',
} as const;

/** A subscription's `slugs` argument. */
export const FOLLOWED_SLUGS = {
  required: false,
  description:
    "The pages to follow (with `tags`, the pages either names): with the operation's other fields, at most `MAX_PAGES_PER_OPERATION` pages (50 unless configured). Omit both for the default page.",
} as const;

/**
 * The pages `selection` names, in configuration order, as they are configured now; without slugs
 * or tags, every configured page (`all`) or the default page (`default`). Slugs and tags nobody
 * configured name nothing: `pageSlugsOf` refuses them.
 */
export function selectedPages(
  { slugs, tags }: PageSelection,
  pages: PageDirectory,
  whenNone: 'all' | 'default',
): string[] {
  if (!slugs && !tags) {
    return whenNone === 'default' ? [pages.defaultSlug] : pages.configs.map((page) => page.slug);
  }
  // What is named, in configuration order: as cheap with ten thousand pages configured as with ten.
  const selected = new Set((slugs ?? []).filter((slug) => pages.has(slug)));
  for (const tag of tags ?? []) for (const slug of pages.tagged(tag)) selected.add(slug);
  return [...selected].sort((a, b) => pages.position(a) - pages.position(b));
}

/**
 * The pages a field's `slug`/`slugs`/`tags` name are its scope (`readsPages`); `reads` says
 * whether the field itself reads their feeds (a page read first) or leaves that to what is selected
 * below it.
 */
export const namedPage: ReadsPages<{ readonly slug?: string | null | undefined }> = (
  { slug },
  pages,
) => ({ scope: [slug ?? pages.defaultSlug] });

/** The pages `slugs` and `tags` name, their feeds read by what is selected of them. */
export const namedPages =
  (whenNone: 'all' | 'default', { readsThem = false } = {}): ReadsPages<PageSelection> =>
  (selection, pages) => {
    const scope = selectedPages(selection, pages, whenNone);
    return readsThem ? { scope } : { scope, reads: [] };
  };

/**
 * What `supportedChains` is about: a chain's page comes from the configuration once the
 * verification service has listed the chain, so every page some chain is mapped to.
 */
export const chainPages: ReadsPages<unknown> = (_args, pages) => ({
  scope: pages.configs.filter((page) => page.chains.length > 0).map((page) => page.slug),
  reads: [],
});

/**
 * The pages a field was given, checked before anything is read: each slug and tag configured, in
 * configuration order, each page once; without any, `whenNone`. How many pages an operation reads
 * is bounded for the whole operation (`usePageBudget`).
 */
export function pageSlugsOf(
  selection: PageSelection,
  pages: PageDirectory,
  { whenNone }: { readonly whenNone: 'all' | 'default' },
): string[] {
  const unknownSlugs = (selection.slugs ?? []).filter((slug) => !pages.has(slug));
  if (unknownSlugs.length > 0) {
    throw new InvalidInputError(
      'slugs',
      `No status page has the slug ${quoted(unknownSlugs)}: \`pages\` lists the configured ones.`,
    );
  }
  const unknownTags = (selection.tags ?? []).filter((tag) => pages.tagged(tag).length === 0);
  if (unknownTags.length > 0) {
    throw new InvalidInputError(
      'tags',
      `No status page has the tag ${quoted(unknownTags)}: \`pages\` lists the pages with their tags.`,
    );
  }
  return selectedPages(selection, pages, whenNone);
}

/** The first five of `values`, each once, cut and quoted; with how many more there are. */
function quoted(values: readonly string[]): string {
  const distinct = [...new Set(values)];
  const named = distinct.slice(0, 5).map((value) => JSON.stringify(value.slice(0, 64)));
  const more = distinct.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${more} more` : named.join(', ');
}
