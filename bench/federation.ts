/**
 * What federating costs: composing the supergraph, and a query answered through Hive Gateway
 * (gateway runtime in-process, both subgraphs over loopback HTTP) against the same query asked of
 * this gateway directly. `npm run bench:federation`.
 */

import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import {
  createRpcEndpointsSubgraph,
  RPC_ENDPOINTS_TYPE_DEFS,
} from '../simulator/src/rpc-endpoints-subgraph.js';
import { printSchemaDocument } from '../src/schema/print.js';
import { startInProcessGateway } from './lib/in-process-gateway.js';

const RUNS = 300;

async function listen(handler: RequestListener) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql` };
}

const running = await startInProcessGateway({ env: { STATUS_CACHE_TTL_MS: '60000' } });
const { simulator } = running;
const relays = simulator.statusFeed.summary.components.filter((c) => c.name === 'JSON-RPC Relay');
const ours = { url: running.url };
const theirs = await listen(
  createRpcEndpointsSubgraph(
    relays.map((relay, i) => ({
      url: `https://rpc-${i}.example`,
      network: `n${i}`,
      componentId: relay.id,
    })),
  ),
);

const composeStarted = performance.now();
const composed = composeServices([
  { name: 'ledger-status', url: ours.url, typeDefs: parse(printSchemaDocument()) },
  { name: 'rpc-endpoints', url: theirs.url, typeDefs: RPC_ENDPOINTS_TYPE_DEFS },
]);
const composeMs = performance.now() - composeStarted;
if (!composed.supergraphSdl) throw new Error(String(composed.errors));
const router = createGatewayRuntime({ supergraph: composed.supergraphSdl, logging: false });

const QUERY = `{ statusPage { components(topLevel: true) { name status children { name status rpcEndpoints { url } } } } }`;
const DIRECT = `{ statusPage { components(topLevel: true) { name status children { name status } } } }`;

async function time(fetcher: (request: Request) => Response | Promise<Response>, query: string) {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const started = performance.now();
    const response = await fetcher(
      new Request('http://local/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      }),
    );
    const text = await response.text();
    if (text.includes('"errors"')) throw new Error(text);
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => (samples[Math.floor(q * samples.length)] ?? 0).toFixed(2);
  return { p50: at(0.5), p99: at(0.99) };
}

const direct = await time((request) => fetch(ours.url, request), DIRECT);
const federated = await time((request) => router.fetch(request), QUERY);

console.log('| measure | value |');
console.log('| --- | --- |');
console.log(`| compose 2 subgraphs | ${composeMs.toFixed(1)} ms |`);
console.log(`| component tree, direct over HTTP, p50 / p99 | ${direct.p50} / ${direct.p99} ms |`);
console.log(
  `| component tree + rpcEndpoints through Hive Gateway, p50 / p99 | ${federated.p50} / ${federated.p99} ms |`,
);

await router.dispose();
theirs.server.closeAllConnections();
theirs.server.close();
await running.close();
