import { builder } from './builder.js';
import { guardEntityRepresentations } from './entity-representations.js';
import './chain.js';
import './component.js';
import './component-status-change.js';
import './contract.js';
import './contract-lookups.js';
import './errors.js';
import './incident.js';
import './status-event-change.js';
import './maintenance.js';
import './page.js';
import './status-event.js';
import './status-overview.js';
import './verification.js';
import './verification-job.js';
import './verification-job-changed.js';
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
