import { builder } from './builder.js';
import { guardEntityRepresentations } from './entity-representations.js';
import { declarePagesRead } from './plugins/page-budget.js';
import './chain.js';
import './component.js';
import './component-status-change.js';
import './contract.js';
import './contract-lookups.js';
import './errors.js';
import './incident.js';
import './incident-connection.js';
import './status-event-change.js';
import './maintenance.js';
import './page.js';
import './page-connection.js';
import './status-event.js';
import './status-overview.js';
import './verification.js';
import './verification-job.js';
import './verification-job-changed.js';
import './verification-similarity.js';
import './verification-sources.js';

/**
 * The graph, as an Apollo Federation v2 subgraph: `_service` and `_entities` come with it, added
 * after the builder's plugins ran, so `_entities` representations are checked here before they are
 * resolved. It resolves status entities through the snapshot loaders (what it reads decides its
 * answer's cacheability); the one entity that reads another upstream (`Contract`, through
 * `context.contracts`) marks its answer itself.
 */
export const schema = guardEntityRepresentations(
  builder.toSubGraphSchema({
    linkUrl: 'https://specs.apollo.dev/federation/v2.6',
    federationDirectives: ['@key'],
    sortSchema: false,
  }),
);

/** The types whose representations name a page: `slug` (a Page), or `page { slug }`. */
const PAGE_ENTITIES = new Set(['Page', 'Component', 'Incident', 'Maintenance']);

// `_entities` is about the pages its representations name (one without a slug, the default page).
// A page, by slug, is resolved from the configuration; by `id`, and every other entity, from the
// page's summary.
declarePagesRead(schema.getQueryType()?.getFields()._entities, ({ representations }, pages) => {
  const scope: string[] = [];
  const reads: string[] = [];
  for (const representation of Array.isArray(representations) ? representations : []) {
    if (typeof representation !== 'object' || representation === null) continue;
    const { __typename, slug, page } = representation as Record<string, unknown>;
    if (typeof __typename !== 'string' || !PAGE_ENTITIES.has(__typename)) continue;
    const named = __typename === 'Page' ? slug : (page as { slug?: unknown } | null)?.slug;
    const pageSlug = typeof named === 'string' ? named : pages.defaultSlug;
    scope.push(pageSlug);
    if (__typename !== 'Page' || typeof slug !== 'string') reads.push(pageSlug);
  }
  return { scope, reads };
});
