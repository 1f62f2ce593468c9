import { InvalidInputError } from '../errors/invalid-input-error.js';
import type { StatusPagesLoaders } from './context.js';
import type { PageDirectory } from './plugins/page-budget.js';

/** A subscription's `slugs` argument. */
export const FOLLOWED_SLUGS = {
  required: false,
  description:
    "The pages to follow: with the operation's other fields, at most `MAX_PAGES_PER_OPERATION` pages (50 unless configured). Omit for the default page.",
} as const;

/** What a field with a `slug` argument reads (`readsPages`): that page, or the default one. */
export const namedPage = (
  { slug }: { readonly slug?: string | null | undefined },
  pages: PageDirectory,
): string[] => [slug ?? pages.defaultSlug];

/**
 * What a field with a `slugs` argument reads (`readsPages`): the pages named, or without any,
 * every configured page (`all`) or the default page alone (as `pageSlugsOf` reads them).
 */
export const namedPages =
  (whenNone: 'all' | 'default') =>
  ({ slugs }: { readonly slugs?: readonly string[] | null | undefined }, pages: PageDirectory) =>
    slugs ?? (whenNone === 'all' ? pages.configs.map((page) => page.slug) : [pages.defaultSlug]);

/**
 * What a chain's status fields read (`readsPages`): a chain's page comes from the configuration
 * once the verification service has listed the chain, so every page some chain is mapped to.
 */
export const chainPages = (_args: unknown, pages: PageDirectory): string[] =>
  pages.configs.filter((page) => page.chains.length > 0).map((page) => page.slug);

/**
 * The slugs a field was given, checked before anything is read: each configured, repeats once, in
 * configuration order. Without any, every configured page (`all`), or the default page alone. How
 * many pages an operation reads is bounded for the whole operation (`usePageBudget`).
 */
export function pageSlugsOf(
  slugs: readonly string[] | null | undefined,
  registry: StatusPagesLoaders['registry'],
  { whenNone }: { readonly whenNone: 'all' | 'default' },
): string[] {
  if (slugs === null || slugs === undefined) {
    if (whenNone === 'default') return [registry.defaultSlug];
    return registry.configs.map((page) => page.slug);
  }
  const unknown = slugs.filter((slug) => !registry.has(slug));
  if (unknown.length > 0) {
    throw new InvalidInputError(
      'slugs',
      `No status page has the slug ${unknown
        .slice(0, 5)
        .map((slug) => JSON.stringify(slug.slice(0, 64)))
        .join(', ')}: ask statusPages for the configured ones.`,
    );
  }
  const wanted = new Set(slugs);
  return registry.configs.filter((page) => wanted.has(page.slug)).map((page) => page.slug);
}
