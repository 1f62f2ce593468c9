import { InvalidInputError } from '../errors/invalid-input-error.js';
import type { StatusPagesLoaders } from './context.js';

/**
 * Pages one field may name (or read, when it names none): each may cost an upstream request, so a
 * query over more must page through them.
 */
export const MAX_PAGES_PER_FIELD = 50;

/** A subscription's `slugs` argument. */
export const FOLLOWED_SLUGS = {
  required: false,
  description: `The pages to follow, at most ${MAX_PAGES_PER_FIELD}. Omit for the default page.`,
} as const;

/**
 * The slugs a field was given, checked before anything is read: at most `MAX_PAGES_PER_FIELD`,
 * each configured, repeats once, in configuration order. Without any, every configured page
 * (`all`), or the default page alone.
 */
export function pageSlugsOf(
  slugs: readonly string[] | null | undefined,
  registry: StatusPagesLoaders['registry'],
  { whenNone }: { readonly whenNone: 'all' | 'default' },
): string[] {
  if (slugs === null || slugs === undefined) {
    if (whenNone === 'default') return [registry.defaultSlug];
    if (registry.configs.length > MAX_PAGES_PER_FIELD) {
      throw new InvalidInputError(
        'slugs',
        `${registry.configs.length} status pages are configured: name at most ${MAX_PAGES_PER_FIELD} of them in slugs.`,
      );
    }
    return registry.configs.map((page) => page.slug);
  }
  if (slugs.length > MAX_PAGES_PER_FIELD) {
    throw new InvalidInputError(
      'slugs',
      `Name at most ${MAX_PAGES_PER_FIELD} status pages (got ${slugs.length}).`,
    );
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
