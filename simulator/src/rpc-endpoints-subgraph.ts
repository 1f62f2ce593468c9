import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';

/**
 * A second subgraph, written for the composition test the way another team would: it knows the
 * JSON-RPC endpoints of the network, points each at our `Component`, and adds `rpcEndpoints` to it.
 * Like an explorer, it also knows some contracts, and leaves their verification to our `Contract`.
 */
export interface RpcEndpoint {
  readonly url: string;
  readonly network: string;
  /** The id of the status component that reports on this endpoint. */
  readonly componentId: string;
}

export const RPC_ENDPOINTS_TYPE_DEFS = parse(/* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])

  type RpcEndpoint @key(fields: "url") {
    url: String!
    network: String!
    component: Component!
  }

  type Component @key(fields: "id") {
    id: ID!
    rpcEndpoints: [RpcEndpoint!]!
  }

  type Contract @key(fields: "chainId address") {
    chainId: String!
    address: String!
  }

  type Query {
    rpcEndpoints: [RpcEndpoint!]!
    knownContracts: [Contract!]!
  }
`);

export function createRpcEndpointsSubgraph(
  endpoints: readonly RpcEndpoint[],
  knownContracts: readonly { chainId: string; address: string }[] = [],
) {
  const schema = buildSubgraphSchema({
    typeDefs: RPC_ENDPOINTS_TYPE_DEFS,
    resolvers: {
      Query: { rpcEndpoints: () => endpoints, knownContracts: () => knownContracts },
      RpcEndpoint: {
        component: (endpoint: RpcEndpoint) => ({ id: endpoint.componentId }),
        __resolveReference: ({ url }: { url: string }) => endpoints.find((e) => e.url === url),
      },
      Component: {
        rpcEndpoints: ({ id }: { id: string }) => endpoints.filter((e) => e.componentId === id),
      },
    },
  });
  return createYoga({ schema, graphqlEndpoint: '/graphql', logging: false });
}
