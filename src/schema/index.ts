import { enforceCacheability } from '../http/response-cache/cacheability.js';
import { spendFieldBudget } from '../plugins/use-field-budget.js';
import { builder } from './builder.js';
import { guardEntityRepresentations } from './entity-representations.js';
import './chain.js';
import './component.js';
import './component-status-change.js';
import './contract.js';
import './contract-lookups.js';
import './errors.js';
import './incident.js';
import './incident-change.js';
import './maintenance.js';
import './maintenance-change.js';
import './page.js';
import './status-event.js';
import './status-overview.js';
import './verification.js';
import './verification-job.js';
import './verification-job-changed.js';
import './verification-sources.js';

/**
 * The graph, as an Apollo Federation v2 subgraph: `_service` and `_entities` come with it. Fields
 * not declared as reading status snapshots mark their answers uncacheable. `_entities` is declared:
 * it resolves status entities through the snapshot loaders, and the one entity that reads another
 * upstream (`Contract`, through `context.contracts`) marks its answer itself. Every field spends
 * from the operation's field budget (`useFieldBudget`), and `_entities` representations are
 * checked before they are resolved.
 */
export const schema = enforceCacheability(
  spendFieldBudget(
    guardEntityRepresentations(
      builder.toSubGraphSchema({
        linkUrl: 'https://specs.apollo.dev/federation/v2.6',
        federationDirectives: ['@key'],
        sortSchema: false,
      }),
    ),
  ),
  ['Query._entities'],
);
