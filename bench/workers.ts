/**
 * `npx tsx bench/workers.ts`: a replica of one worker against one of two (`GATEWAY_WORKERS`), the
 * production build and flags against the simulator. Prints, for each contender: the tiny query's
 * hits a second at 50 connections (paired rounds taken in turns, the order swapped each round),
 * SSE subscriptions opened a second (`--subscribers` at once, 100 connecting at a time), and the
 * spread of one change over them: from the poll that found it (`detectedAt`) to the last
 * subscriber's event, and between the workers' first events. `--reuse-port` adds two workers that
 * each bind the port with SO_REUSEPORT (the kernel balancing) instead of node:cluster's round
 * robin in the primary: a patched copy of the build, for this measurement only.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { markdownTable, runLoad } from './lib/load.js';
import {
  type ContenderSpec,
  type GraphqlServer,
  gatewaySpec,
  ROOT,
  runBin,
  type SimulatorProcess,
  sleep,
  spawnSimulator,
  startContender,
  watchdog,
} from './lib/processes.js';
import { TINY_BODY } from './lib/queries.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '5' },
    subscribers: { type: 'string', default: '2000' },
    'reuse-port': { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const SUBSCRIBERS = Number(values.subscribers);
const TTL_MS = 1_000;
const CHANGES = JSON.stringify({
  query: 'subscription { componentStatusChanged { component { id } status detectedAt } }',
});

watchdog(30 * 60_000, 'bench/workers');

/** A copy of the build whose workers bind the port each with SO_REUSEPORT. */
function reusePortBuild(): string {
  const copy = resolve(ROOT, 'dist-reuseport');
  rmSync(copy, { recursive: true, force: true });
  cpSync(resolve(ROOT, 'dist'), copy, { recursive: true });
  const main = resolve(copy, 'main.js');
  const text = readFileSync(main, 'utf8');
  const patched = text.replace(
    'backlog: 4096 }',
    'backlog: 4096, reusePort: true, exclusive: true }',
  );
  if (patched === text) throw new Error('dist/main.js: no listen options to patch');
  writeFileSync(main, patched);
  return 'dist-reuseport/main.js';
}

function specOf(simulator: SimulatorProcess, name: string, workers: number, script?: string) {
  const spec = gatewaySpec(simulator);
  return {
    ...spec,
    name,
    ...(script ? { script } : {}),
    env: {
      ...spec.env,
      GATEWAY_WORKERS: String(workers),
      STATUS_CACHE_TTL_MS: String(TTL_MS),
      STATUS_POLL_INTERVAL_MS: String(TTL_MS),
      MAX_SUBSCRIPTIONS: '100000',
      MAX_SUBSCRIPTIONS_PER_CLIENT: '100000',
      HTTP_MAX_CONNECTIONS: '20000',
    },
  } satisfies ContenderSpec;
}

interface Subscriber {
  readonly opened: Promise<void>;
  /** When its first event of a change detected at `since` or later came, and that `detectedAt`. */
  eventSince(since: number): Promise<{ at: number; detectedAt: number }>;
  close(): void;
}

function subscribe(origin: string): Subscriber {
  let close = () => {};
  let opened!: () => void;
  let failed!: (error: Error) => void;
  const openedPromise = new Promise<void>((resolve_, reject) => {
    opened = resolve_;
    failed = reject;
  });
  const events: { at: number; detectedAt: number }[] = [];
  let wake = () => {};
  {
    const sent = request(
      `${origin}/graphql`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      },
      (response) => {
        if (response.statusCode !== 200) failed(new Error(`SSE: ${response.statusCode}`));
        else opened();
        let buffer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          buffer += chunk;
          for (const match of buffer.matchAll(/"detectedAt":"([^"]+)"/g)) {
            events.push({ at: Date.now(), detectedAt: Date.parse(match[1] as string) });
          }
          buffer = buffer.slice(buffer.lastIndexOf('\n'));
          wake();
        });
      },
    );
    sent.on('error', (error) => failed(error));
    sent.end(CHANGES);
    close = () => sent.destroy();
  }
  const eventSince = async (since: number) => {
    for (;;) {
      const found = events.find((event) => event.detectedAt >= since);
      if (found) return found;
      await new Promise<void>((resolve_) => {
        wake = resolve_;
      });
    }
  };
  return { opened: openedPromise, eventSince, close };
}

async function openCrowd(origin: string, count: number) {
  const crowd: Subscriber[] = [];
  const started = performance.now();
  for (let index = 0; index < count; index += 100) {
    const batch = Array.from({ length: Math.min(100, count - index) }, () => subscribe(origin));
    crowd.push(...batch);
    await Promise.all(batch.map((subscriber) => subscriber.opened));
  }
  return { crowd, openedPerSecond: count / ((performance.now() - started) / 1000) };
}

async function spreadOf(simulator: SimulatorProcess, crowd: Subscriber[], status: string) {
  // Events of changes found before (a worker's first poll may find the feed changed since its
  // last read) are not this change's.
  const since = Date.now();
  const feed = await simulator.feed();
  const leaf = feed.components.find((component) => !component.group);
  if (!leaf) throw new Error('the feed has a component');
  await fetch(`${simulator.origin}/_simulator/status-feed`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ components: { [leaf.id]: status } }),
  }).then(async (response) => {
    if (!response.ok) throw new Error(`simulator: ${response.status} ${await response.text()}`);
  });
  const events = await Promise.all(crowd.map((subscriber) => subscriber.eventSince(since)));
  const detectedAt = Math.min(...events.map((event) => event.detectedAt));
  const arrivals = events.map((event) => event.at - detectedAt).sort((a, b) => a - b);
  return {
    first: arrivals[0] ?? 0,
    last: arrivals.at(-1) ?? 0,
    distinctDetections: new Set(events.map((event) => event.detectedAt)).size,
  };
}

runBin('tsc', ['-p', 'tsconfig.build.json']);
const simulator = await spawnSimulator('realistic');
const contenders: [string, ContenderSpec][] = [
  ['1 worker', specOf(simulator, 'one', 1)],
  ['2 workers (node:cluster, round robin)', specOf(simulator, 'two', 2)],
  ...(values['reuse-port']
    ? ([['2 workers (SO_REUSEPORT)', specOf(simulator, 'reuse', 2, reusePortBuild())]] as [
        string,
        ContenderSpec,
      ][])
    : []),
];
try {
  const servers: GraphqlServer[] = [];
  for (const [, spec] of contenders) servers.push(await startContender(spec));
  await sleep(2_000);
  const hits: number[][] = contenders.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const order = contenders.map((_, index) => index);
    if (round % 2 === 1) order.reverse();
    for (const index of order) {
      const server = servers[index] as GraphqlServer;
      const load = await runLoad({
        url: server.url,
        connections: 50,
        durationSeconds: SECONDS,
        requests: [{ kind: 'tiny', body: TINY_BODY }],
      });
      (hits[index] as number[]).push(Math.round(load.requestsPerSecond));
    }
  }
  const rows = [];
  for (const [index, [name]] of contenders.entries()) {
    const server = servers[index] as GraphqlServer;
    const { crowd, openedPerSecond } = await openCrowd(server.origin, SUBSCRIBERS);
    await sleep(2 * TTL_MS);
    const spread = await spreadOf(
      simulator,
      crowd,
      index % 2 === 0 ? 'major_outage' : 'operational',
    );
    for (const subscriber of crowd) subscriber.close();
    const rounds = hits[index] as number[];
    const median = [...rounds].sort((a, b) => a - b)[Math.floor(rounds.length / 2)];
    rows.push([
      name,
      `${median} (${rounds.join(', ')})`,
      Math.round(openedPerSecond),
      spread.first,
      spread.last,
      spread.distinctDetections,
    ]);
    await server.stop(30_000);
    await sleep(1_000);
  }
  console.log(
    markdownTable(
      [
        'replica',
        'tiny query hits/s, median (rounds)',
        `SSE opened/s (${SUBSCRIBERS})`,
        'first event, ms after detectedAt',
        'last event, ms after detectedAt',
        'detections',
      ],
      rows,
    ),
  );
} finally {
  await simulator.stop();
  rmSync(resolve(ROOT, 'dist-reuseport'), { recursive: true, force: true });
}
