import { createGatewayRuntime, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRpcEndpointsSubgraph,
  RPC_ENDPOINTS_TYPE_DEFS,
  type RpcEndpoint,
} from '../../simulator/src/rpc-endpoints-subgraph.js';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { printSchemaDocument } from '../../src/schema/print.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { type Listening, listen } from '../helpers/listen.js';

const [verified] = VERIFIABLE_CONTRACTS;
const CONTRACTS = [
  { chainId: verified?.chainId ?? '1', address: verified?.address ?? '' },
  { chainId: '1', address: '0x000000000000000000000000000000000000dEaD' },
];

describe('composed with another subgraph behind a federation gateway', () => {
  let harness: Harness;
  let router: GatewayRuntime;
  const servers: Listening[] = [];
  let endpoints: RpcEndpoint[];

  beforeAll(async () => {
    harness = await startHarness();
    const relays = harness.simulator.statusFeed.summary.components.filter(
      (c) => c.name === 'JSON-RPC Relay',
    );
    endpoints = relays.map((relay, i) => ({
      url: `https://rpc-${i}.example-ledger.com/api`,
      network: `network-${i}`,
      componentId: relay.id,
    }));

    const theirs = await listen(createRpcEndpointsSubgraph(endpoints, CONTRACTS));
    servers.push(theirs);

    const composed = composeServices([
      {
        name: 'ledger-status',
        url: `${harness.origin}/graphql`,
        typeDefs: parse(printSchemaDocument()),
      },
      {
        name: 'rpc-endpoints',
        url: `${theirs.origin}/graphql`,
        typeDefs: RPC_ENDPOINTS_TYPE_DEFS,
      },
    ]);
    expect(composed.errors?.map((error) => error.message)).toBeUndefined();
    if (!composed.supergraphSdl) throw new Error('no supergraph');
    router = createGatewayRuntime({ supergraph: composed.supergraphSdl, logging: false });
  });

  afterAll(async () => {
    await router?.dispose();
    await Promise.all(servers.map((server) => server.close()));
    await harness?.close();
  });

  async function query<Data>(document: string) {
    const response = await router.fetch('http://router/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: document }),
    });
    return (await response.json()) as { data?: Data; errors?: unknown[] };
  }

  it('resolves our Component from the other subgraph: status, group and incidents', async () => {
    const { data, errors } = await query<{
      rpcEndpoints: {
        url: string;
        component: {
          name: string;
          status: string;
          group: { name: string };
          incidents: { name: string }[];
        };
      }[];
    }>(`{
      rpcEndpoints {
        url
        component { name status group { name } incidents { name } }
      }
    }`);
    expect(errors).toBeUndefined();
    expect(data?.rpcEndpoints).toHaveLength(endpoints.length);
    const components = harness.simulator.statusFeed.summary.components;
    for (const endpoint of data?.rpcEndpoints ?? []) {
      const relay = endpoints.find((e) => e.url === endpoint.url);
      const wire = components.find((c) => c.id === relay?.componentId);
      const group = components.find((c) => c.id === wire?.group_id);
      expect(endpoint.component.name).toBe('JSON-RPC Relay');
      expect(endpoint.component.status).toBe(wire?.status.toUpperCase());
      expect(endpoint.component.group.name).toBe(group?.name);
      expect(Array.isArray(endpoint.component.incidents)).toBe(true);
    }
  });

  it('reaches the field the other subgraph adds to our Component', async () => {
    const { data, errors } = await query<{
      statusPage: {
        components: {
          name: string;
          children: { name: string; rpcEndpoints: { url: string }[] }[];
        }[];
      };
    }>(`{
      statusPage {
        components(topLevel: true) { name children { name rpcEndpoints { url network } } }
      }
    }`);
    expect(errors).toBeUndefined();
    const relays = (data?.statusPage.components ?? []).flatMap((group) =>
      group.children.filter((child) => child.name === 'JSON-RPC Relay'),
    );
    expect(relays.length).toBe(endpoints.length);
    expect(relays.flatMap((relay) => relay.rpcEndpoints.map((e) => e.url)).sort()).toEqual(
      endpoints.map((e) => e.url).sort(),
    );
    const others = (data?.statusPage.components ?? []).flatMap((g) => g.children);
    expect(
      others.filter((c) => c.name !== 'JSON-RPC Relay').every((c) => c.rpcEndpoints.length === 0),
    ).toBe(true);
  });

  it('resolves our Contract entity for the contracts another subgraph knows', async () => {
    const { data, errors } = await query<{
      knownContracts: { address: string; verified: boolean; match: string | null }[];
    }>('{ knownContracts { address verified match } }');
    expect(errors).toBeUndefined();
    expect(data?.knownContracts).toEqual([
      { address: CONTRACTS[0]?.address, verified: true, match: 'PERFECT' },
      { address: CONTRACTS[1]?.address, verified: false, match: null },
    ]);
  });
});
