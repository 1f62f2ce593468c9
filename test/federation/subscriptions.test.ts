import { createGatewayRuntime, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createRpcEndpointsSubgraph,
  RPC_ENDPOINTS_TYPE_DEFS,
} from '../../simulator/src/rpc-endpoints-subgraph.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { printSchemaDocument } from '../../src/schema/print.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { type Listening, listen } from '../helpers/listen.js';
import { allEnded, openSubscriptions } from '../helpers/live-subscriptions.js';
import { polledOnce, subscribeSse } from '../helpers/subscriptions.js';

const TTL_MS = 150;

const CHANGES = /* GraphQL */ `
  subscription {
    componentStatusChanged {
      component { id name status rpcEndpoints { url } }
      previousStatus
      status
    }
  }
`;

interface Change {
  componentStatusChanged: {
    component: { id: string; status: string; rpcEndpoints: { url: string }[] };
    previousStatus: string;
    status: string;
  };
}

/*
 * One gateway behind both routers. Each test changes the relay, and puts it back after: the gateway
 * has served it operational again before the next test subscribes. Each router's sockets to the
 * gateway end with the router.
 */
let harness: Harness;
let relayId = '';

beforeAll(async () => {
  harness = await startHarness({ env: { STATUS_CACHE_TTL_MS: TTL_MS }, logLevel: 'info' });
  const relay = harness.simulator.statusFeed.summary.components.find(
    (c) => c.name === 'JSON-RPC Relay',
  );
  relayId = relay?.id ?? '';
});
afterEach(async () => {
  await eventually(async () => (await openSubscriptions(harness)) === 0);
  harness.simulator.updateStatusFeed((feed) =>
    setComponentStatuses(feed, { [relayId]: 'operational' }),
  );
  await eventually(async () => {
    const { body } = await harness.execute<{ component: { status: string } | null }>(
      'query ($id: ID!) { component(id: $id) { status } }',
      { id: relayId },
    );
    return body.data?.component?.status === 'OPERATIONAL';
  });
});
afterAll(() => harness?.close());

/*
 * Hive Gateway in front of the gateway and a second subgraph: a subscription made through it
 * reaches this subgraph over its subscription transport (SSE, Hive Gateway's default for HTTP
 * subgraphs, or graphql-ws), and each event is completed with the other subgraph's fields.
 */
describe.each([
  ['SSE (the HTTP transport)', undefined],
  ['graphql-ws', { kind: 'ws', location: '/graphql' }],
] as const)('subscriptions through Hive Gateway over %s', (_name, subscriptions) => {
  let router: GatewayRuntime;
  const servers: Listening[] = [];
  let routerOrigin = '';

  beforeAll(async () => {
    const theirs = await listen(
      createRpcEndpointsSubgraph(
        [{ url: 'https://rpc.example-ledger.com/api', network: 'mainnet', componentId: relayId }],
        [],
      ),
    );
    servers.push(theirs);
    const composed = composeServices([
      {
        name: 'ledger-status',
        url: `${harness.origin}/graphql`,
        typeDefs: parse(printSchemaDocument()),
      },
      { name: 'rpc-endpoints', url: `${theirs.origin}/graphql`, typeDefs: RPC_ENDPOINTS_TYPE_DEFS },
    ]);
    expect(composed.errors?.map((error) => error.message)).toBeUndefined();
    if (!composed.supergraphSdl) throw new Error('no supergraph');
    router = createGatewayRuntime({
      supergraph: composed.supergraphSdl,
      logging: false,
      ...(subscriptions
        ? { transportEntries: { 'ledger-status': { options: { subscriptions } } } }
        : {}),
    });
    const front = await listen(router);
    servers.push(front);
    routerOrigin = front.origin;
  });

  afterAll(async () => {
    await router?.dispose();
    await Promise.all(servers.map((server) => server.close()));
    await allEnded(harness);
  });

  it('delivers a component changed in the simulator, with the other subgraph’s fields', async () => {
    const changes = await subscribeSse<Change>(routerOrigin, CHANGES);
    await polledOnce(harness.simulator);
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [relayId]: 'degraded_performance' }),
    );
    // Its group (Mainnet) stays at its worst child's status: the relay is the one change.
    const relay = await changes.next();
    expect(relay?.errors).toBeUndefined();
    expect(relay?.data?.componentStatusChanged).toEqual({
      component: {
        id: relayId,
        name: 'JSON-RPC Relay',
        status: 'DEGRADED_PERFORMANCE',
        rpcEndpoints: [{ url: 'https://rpc.example-ledger.com/api' }],
      },
      previousStatus: 'OPERATIONAL',
      status: 'DEGRADED_PERFORMANCE',
    });
    const opened = harness.logs.filter((line) => line.msg === 'subscription opened');
    expect(opened.at(-1)).toMatchObject({ transport: subscriptions ? 'websocket' : 'http' });
    await changes.close();
  });
});
