import type { ObjectRef } from '@pothos/core';
import type { Component, Incident, Maintenance } from '../core/status/model.js';
import { builder } from './builder.js';
import { namedPage } from './page-slugs.js';

type PageEntity = Component | Incident | Maintenance;

/**
 * Makes `ref` an entity of a page (`Component`, `Incident`, `Maintenance`) and adds its root field
 * by id, both looked up with the page's `loader`. Statuspage ids are unique within one page only:
 * the key `id page { slug }` names the page, and `id` alone, the key from before there were several
 * pages, looks on the default page. A page nobody configured answers `null`, as an unknown id does.
 */
export function pageEntity(
  ref: ObjectRef<typeof builder.$inferSchemaTypes, PageEntity>,
  loader: 'component' | 'incident' | 'maintenance',
  description: string,
): void {
  builder.asEntity(ref, {
    key: [
      builder.selection<{ id: string }>('id'),
      builder.selection<{ id: string; page: { slug: string } }>('id page { slug }'),
    ],
    resolveReference: ({ id, page }: { id: string; page?: { slug: string } }, { statusPages }) =>
      page?.slug !== undefined && !statusPages.registry.has(page.slug)
        ? null
        : statusPages.of(page?.slug)[loader].load(id),
  });
  builder.queryField(loader, (t) =>
    t.field({
      readsStatusSnapshots: true,
      readsPages: namedPage,
      type: ref,
      nullable: true,
      description,
      args: {
        id: t.arg.id({ required: true, description: `The ${loader}'s \`id\`.` }),
        slug: t.arg.string({
          required: false,
          description: 'The page. Omit for the default page.',
        }),
      },
      resolve: (_root, { id, slug }, { statusPages }) =>
        statusPages.of(slug ?? undefined)[loader].load(String(id)),
    }),
  );
}
