import http from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSimulatedFeed,
  STATUS_FEED_PRESETS,
} from '../../simulator/src/status-feed/fixture.js';
import { PAGE_TREE_QUERY } from '../../src/http/page-tree-query.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';

/*
 * Finding: an idle `statusPageChanged` subscriber selecting the page tree held about 390 KB on a
 * 500-component page: the executor kept the last event's whole result reachable while it waited
 * for the next event, and the subscription's loaders kept the feed snapshot that event was read
 * from (a new one each refetch). Now no result is kept once handed on
 * (`useMultiplexedSubscriptions`), an idle subscription holds no loader state, and subscribers of
 * the same operation share one subscription (`SharedSubscriptions`), which keeps its last page
 * once for them all, to start late subscribers with.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The gateway runs in this process: what its heap retains, garbage collected first. */
const heapBytes = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

const SUBSCRIBERS = 150;
const PAGE_TREE = PAGE_TREE_QUERY.replace('query PageTree', 'subscription PageTree').replace(
  'statusPage {',
  'statusPageChanged {',
);

let harness: Harness;
const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
beforeAll(async () => {
  harness = await startHarness({
    simulator: { statusFeed: createSimulatedFeed(STATUS_FEED_PRESETS.large) },
    env: { MAX_SUBSCRIPTIONS: 10_000, MAX_SUBSCRIPTIONS_PER_CLIENT: 10_000 },
    logLevel: 'silent',
  });
});
afterAll(async () => {
  agent.destroy();
  await harness?.close();
});

/**
 * A page tree subscriber that keeps nothing it receives (so that only the gateway's memory is
 * measured here); resolves once its first page arrived whole.
 */
function subscribe(): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${harness.origin}/graphql`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      },
      (response) => {
        let tail = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          tail = (tail + chunk).slice(-4);
          // An event ends with a blank line; the page event is the first after the opening ping.
          if (tail.endsWith('}\n\n')) resolve(request);
        });
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ query: PAGE_TREE }));
  });
}

describe('an idle page tree subscriber', () => {
  it('holds neither its last page nor the snapshot it was read from', async () => {
    // The first subscriber builds what they all share (the feed's snapshots, compiled code).
    const warm = await subscribe();
    warm.destroy();
    const before = heapBytes();
    const subscribers: http.ClientRequest[] = [];
    for (let i = 0; i < SUBSCRIBERS; i += 1) subscribers.push(await subscribe());
    const perSubscriber = (heapBytes() - before) / SUBSCRIBERS;

    // Measured here, the client's sockets included: 315 KB at first, 60 KB with a subscription
    // each (sockets, the request, its stream and context), 24 KB sharing one (sockets, request
    // and response).
    expect(perSubscriber).toBeLessThan(50_000);

    // And what they held goes with them.
    for (const subscriber of subscribers) subscriber.destroy();
    await eventually(() => heapBytes() < before + 4 * 2 ** 20);
  });
});
