import { builder } from './builder.js';
import './chain.js';
import './component.js';
import './contract.js';
import './errors.js';
import './incident.js';
import './maintenance.js';
import './page.js';
import './status-event.js';
import './verification.js';

/** The graph, as an Apollo Federation v2 subgraph: `_service` and `_entities` come with it. */
export const schema = builder.toSubGraphSchema({
  linkUrl: 'https://specs.apollo.dev/federation/v2.6',
  federationDirectives: ['@key'],
  sortSchema: false,
});
