/**
 * Subscriptions on a real port: the production gateway (`dist/main.js`) and the simulator, each in
 * its own process on loopback.
 *
 * 1. Latency: a component is changed through the simulator's control API, and the time until an
 *    SSE subscriber and a graphql-ws subscriber receive the change is measured, `--rounds` times.
 *    A change is found by the next poll, so it arrives within the poll interval plus the time to
 *    fetch, diff and send it; the done-when bound is the poll interval plus 1 s.
 * 2. Upstream cost: `--subscribers` SSE and as many graphql-ws subscriptions, plus query load, for
 *    `--duration` seconds; the simulator's request log counts the feed requests.
 *
 * `npm run bench:subscriptions [-- --ttl 2000 --rounds 10 --subscribers 50 --duration 20]`.
 * Writes bench/results/subscriptions-<timestamp>.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { subscribeSse, subscribeWs, wsClient } from '../test/helpers/subscriptions.js';
import { runLoad, timestamp } from './lib/load.js';
import {
  gatewaySpec,
  ROOT,
  sleep,
  spawnSimulator,
  startContender,
  watchdog,
} from './lib/processes.js';
import { TINY_BODY } from './lib/queries.js';

const { values } = parseArgs({
  options: {
    ttl: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '10' },
    subscribers: { type: 'string', default: '50' },
    duration: { type: 'string', default: '20' },
  },
});
const ttlMs = Number(values.ttl);
const rounds = Number(values.rounds);
const subscribers = Number(values.subscribers);
const durationSeconds = Number(values.duration);
watchdog((rounds * (ttlMs + 2_000) + durationSeconds * 1_000) * 2 + 60_000, 'bench/subscriptions');

const CHANGES = 'subscription ($ids: [ID!]) { componentStatusChanged(ids: $ids) { status } }';
interface Change {
  componentStatusChanged: { status: string };
}

const simulator = await spawnSimulator('realistic');
const spec = gatewaySpec(simulator);
const gateway = await startContender({
  ...spec,
  env: {
    ...spec.env,
    STATUS_CACHE_TTL_MS: String(ttlMs),
    MAX_SUBSCRIPTIONS: '10000',
    MAX_SUBSCRIPTIONS_PER_CLIENT: '10000',
    MAX_WEBSOCKETS_PER_CLIENT: '10000',
  },
});

try {
  const feed = await simulator.feed();
  const leaf = feed.components.find((component) => !component.group);
  if (!leaf) throw new Error('the feed has no leaf component');

  // 1. Latency, SSE and graphql-ws side by side.
  const sse = await subscribeSse<Change>(gateway.origin, CHANGES, { ids: [leaf.id] });
  const client = wsClient(gateway.origin, { lazy: false });
  const ws = subscribeWs<Change>(client, CHANGES, { ids: [leaf.id] });
  await sleep(2 * ttlMs);
  const latency: { sse: number[]; ws: number[] } = { sse: [], ws: [] };
  for (let round = 0; round < rounds; round += 1) {
    const status = round % 2 === 0 ? 'major_outage' : 'operational';
    // Changes land at a random point of the poll cycle, as real ones do.
    await sleep(Math.random() * ttlMs);
    const changed = performance.now();
    const control = await fetch(`${simulator.origin}/_simulator/status-feed`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ components: { [leaf.id]: status } }),
    });
    if (!control.ok) throw new Error(`control API: ${control.status}`);
    const timeout = ttlMs + 5_000;
    await Promise.all(
      (['sse', 'ws'] as const).map(async (transport) => {
        const event = await (transport === 'sse' ? sse : ws).next(timeout);
        if (event.data?.componentStatusChanged.status !== status.toUpperCase()) {
          throw new Error(`${transport}: unexpected ${JSON.stringify(event)}`);
        }
        latency[transport].push(Math.round(performance.now() - changed));
      }),
    );
  }
  await sse.close();
  await ws.close();
  await client.dispose();

  // 2. Upstream requests under subscribers and queries.
  const clients = Array.from({ length: Math.ceil(subscribers / 10) }, () =>
    wsClient(gateway.origin, { lazy: false }),
  );
  const held = [
    ...(await Promise.all(
      Array.from({ length: subscribers }, () => subscribeSse(gateway.origin, CHANGES)),
    )),
    ...Array.from({ length: subscribers }, (_, i) =>
      subscribeWs(clients[i % clients.length] ?? client, CHANGES),
    ),
  ];
  await sleep(ttlMs);
  await simulator.resetRequests();
  const load = await runLoad({
    url: gateway.url,
    connections: 16,
    durationSeconds,
    requests: [{ kind: 'statusPage', body: TINY_BODY }],
  });
  const upstream = await simulator.requests();
  await Promise.all(held.map((subscription) => subscription.close()));
  await Promise.all(clients.map((each) => each.dispose()));

  const summary = upstream.byPath['/status/api/v2/summary.json'] ?? 0;
  const bound = ttlMs + 1_000;
  const stats = (samples: number[]) => {
    const sorted = [...samples].sort((a, b) => a - b);
    return {
      min: sorted[0],
      p50: sorted[Math.floor(sorted.length / 2)],
      max: sorted.at(-1),
      withinBound: samples.every((ms) => ms <= bound),
    };
  };
  const result = {
    ttlMs,
    pollIntervalMs: ttlMs,
    boundMs: bound,
    latencyMs: {
      sse: { ...stats(latency.sse), samples: latency.sse },
      ws: { ...stats(latency.ws), samples: latency.ws },
    },
    load: {
      subscriptions: { sse: subscribers, websocket: subscribers },
      durationSeconds,
      queries: load.requests,
      queriesPerSecond: load.requestsPerSecond,
      queryErrors: load.errors,
      upstreamRequests: upstream.byPath,
      summaryRequestsPerTtl:
        Math.round((summary / ((durationSeconds * 1_000) / ttlMs)) * 100) / 100,
    },
  };
  console.log(JSON.stringify(result, null, 2));
  const directory = resolve(ROOT, 'bench/results');
  mkdirSync(directory, { recursive: true });
  writeFileSync(
    resolve(directory, `subscriptions-${timestamp()}.json`),
    `${JSON.stringify(result, null, 2)}\n`,
  );
  if (!result.latencyMs.sse.withinBound || !result.latencyMs.ws.withinBound) process.exitCode = 1;
} finally {
  await gateway.stop();
  await simulator.stop();
}
