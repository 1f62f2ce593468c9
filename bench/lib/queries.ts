/** The GraphQL operations the load test and the benchmark send, as JSON request bodies. */

import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { PAGE_TREE_QUERY } from '../../src/http/page-tree-query.js';

const body = (query: string, variables?: Record<string, unknown>) =>
  JSON.stringify(variables ? { query, variables } : { query });

/** (a) The whole status page, as a status widget asks for it. */
export const PAGE_TREE_BODY = body(PAGE_TREE_QUERY);

/** (b) The smallest useful query: the banner's indicator. */
export const TINY_BODY = body('{ statusPage { status { indicator } } }');

const COMPONENT_QUERY = `query Component($id: ID!) {
  component(id: $id) { id name status isGroup group { name } }
}`;

/** (c) One component by id. */
export const componentBody = (id: string) => body(COMPONENT_QUERY, { id });

const ENTITIES_QUERY =
  'query($r:[_Any!]!){_entities(representations:$r){... on Component{id name status}}}';

/** (d) One `_entities` call resolving `count` Component representations (ids cycled). */
export function entitiesBody(ids: readonly string[], count = 100): string {
  const representations = Array.from({ length: count }, (_, i) => ({
    __typename: 'Component',
    id: ids[i % ids.length],
  }));
  return body(ENTITIES_QUERY, { r: representations });
}

const VERIFY_MUTATION = `mutation Verify($input: VerifyContractInput!) {
  verifyContract(input: $input) {
    __typename
    ... on VerificationResult { contracts { name address chainId status } unused }
    ... on VerificationRejectedError { status message }
    ... on RateLimitedError { retryAfterSeconds message }
    ... on Error { message }
  }
}`;

/** `verifyContract` over the simulator's fixture contracts, to send one after another. */
export const VERIFY_BODIES = VERIFIABLE_CONTRACTS.map(({ address, chainId }) =>
  body(VERIFY_MUTATION, { input: { address, chainId } }),
);

/** Where the union member a `verifyContract` answer holds is. */
export const VERIFY_TYPENAME = ['data', 'verifyContract', '__typename'] as const;

// ---------------------------------------------------------------------------------------------
// The same data asked of the GraphQL Mesh contender (flat: the OpenAPI source has no tree)

const MESH_EVENT = `id name impact shortlink status
  components { id name group_id }`;

/** (a) for Mesh: summary + upcoming, the fields the page tree shows, flat. */
export const MESH_PAGE_TREE_BODY = body(`query PageTreeFlat {
  summary {
    page { id name url updated_at }
    status { indicator description }
    components { id name status group group_id }
    incidents { ${MESH_EVENT} incident_updates { status body display_at } }
    scheduled_maintenances { ${MESH_EVENT} scheduled_for scheduled_until }
  }
  upcomingScheduledMaintenances {
    scheduled_maintenances { ${MESH_EVENT} scheduled_for scheduled_until }
  }
}`);

/** (b) for Mesh: the summary's indicator. */
export const MESH_TINY_BODY = body('{ summary { status { indicator } } }');

/** (c) for Mesh: no lookup by id exists, so the client gets every component and filters. */
export const MESH_COMPONENTS_BODY = body('{ summary { components { id name status group_id } } }');
