import { builder } from './builder.js';
import type { StatusFeedLoaders, StatusPagesLoaders } from './context.js';

/**
 * The keys of an entity of a page (`Component`, `Incident`, `Maintenance`). Statuspage ids are
 * unique within one page only: `id page { slug }` names the page, and `id` alone, the key from
 * before there were several pages, looks on the default page.
 */
export const PAGE_ENTITY_KEYS = [
  builder.selection<{ id: string }>('id'),
  builder.selection<{ id: string; page: { slug: string } }>('id page { slug }'),
];

/**
 * Looks a representation up on the page it names (the default page without one) with `lookUp`;
 * `null` for a page nobody configured, as for an id the page does not have.
 */
export function onPageOf<Value>(
  representation: { readonly id: string; readonly page?: { readonly slug: string } },
  statusPages: StatusPagesLoaders,
  lookUp: (page: StatusFeedLoaders) => Promise<Value | null>,
): Promise<Value | null> | null {
  const slug = representation.page?.slug;
  if (slug !== undefined && !statusPages.registry.has(slug)) return null;
  return lookUp(statusPages.of(slug));
}
