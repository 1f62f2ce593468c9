/**
 * Fan-out to a crowd (issue 26): the production gateway (`dist/main.js`, the Dockerfile's node
 * flags, NODE_ENV=production) with its subscription limits raised to allow the crowd, the
 * simulator's realistic feed, STATUS_CACHE_TTL_MS=1000.
 *
 * The gateway is started with `GATEWAY_WORKERS=--workers`; the bench counts the processes it
 * actually runs (the started one and what it forked, from /proc) and sums RSS and CPU over them.
 *
 * 0. The floor (SSE only, `--no-floor` to skip): a bare node:http SSE server
 *    (`bench/lib/sse-floor.ts`) with as many processes as the gateway serves with (node:cluster
 *    workers when more than one), opened by the same client code with the same concurrency: the
 *    most SSE opens a second this machine allows, to set the gateway's open rate against. It is
 *    opened before the gateway's crowd and again after it, and the two rates averaged. Each time
 *    it then writes one event to every stream (each process signalled at once, 64 streams a turn
 *    as the hub writes them): the floor of a fan-out on this machine, with the same crowd reading.
 * 1. The crowd, `--clients` child processes (`bench/lib/crowd.ts`, `bench/lib/fanout-client.ts`;
 *    by default one per 12,000 connections, since a process here may hold 20,000 open files),
 *    opens `--subscribers` subscribers at once, over SSE (one HTTP connection each) or graphql-ws
 *    (10 per socket), each process from its own loopback source addresses (127.0.1.1, …, 1,000
 *    connections each), after one SSE probe that selects `detectedAt`: the time the poll that found
 *    the change fetched the feed.
 * 2. Once they are idle, the gateway's heap (`nodejs_heap_size_used_bytes` from /metrics, the
 *    lowest of several reads; over several workers only when /metrics answers for all of them, as
 *    its `gateway_workers` or its `process_resident_memory_bytes` against their RSS tells) and RSS
 *    (summed over the processes) are compared with before: the cost of an idle subscriber.
 * 3. Cached queries (`{ statusPage { status { indicator } } }`) go out at `--rate` a second from
 *    this process; a leaf component is changed through the simulator's control API, and the bench
 *    waits until every subscriber has the change. The gateway's CPU (utime+stime in /proc) over
 *    the event, less what the queries cost at the same rate before it, is the event's CPU.
 *
 * `npm run bench:fanout -- --subscribers 1000 [--transport sse|ws] [--field component|page]
 * [--workers N] [--clients K]` (`--concurrency 100` opens at once, `--rate 200` queries a second,
 * `--ttl 1000`, `--gateway-env KEY=VALUE`, repeatable, to run the gateway with other settings,
 * `--max-old-space-size MiB` in place of the Dockerfile's heap limit, for a replica sized for
 * crowds, `--floor-workers M` for a floor of other than as many processes as the gateway serves
 * with, `--floor-balance cluster|reuseport` for how the floor's workers share the port).
 * Writes bench/results/fanout-<timestamp>.json. The bench re-runs itself under `ulimit -n
 * 1048576` (or the hard limit) so that the gateway and the crowd may hold that many sockets; a
 * gateway process that would have to hold more sockets than that is said before the crowd opens.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type CrowdOpen, startCrowd } from './lib/crowd.js';
import { timestamp } from './lib/load.js';
import { latencySummary, pacedQueries } from './lib/paced-queries.js';
import {
  cpuOf,
  isAlive,
  openFilesOf,
  type ProcessTree,
  peakRssOf,
  processTree,
  rssOf,
} from './lib/process-tree.js';
import {
  gatewaySpec,
  type ManagedProcess,
  mib,
  postGraphql,
  ROOT,
  sleep,
  spawnSimulator,
  startContender,
  watchdog,
} from './lib/processes.js';
import { TINY_BODY } from './lib/queries.js';

const NOFILE = 1_048_576;
if (process.env.FANOUT_NOFILE === undefined) {
  // Once more, with room for the sockets: the gateway, the crowd and the queries inherit it. Without
  // CAP_SYS_RESOURCE (a container may drop it, even for root) the hard limit is as far as it goes.
  const again = spawnSync(
    'bash',
    [
      '-c',
      `ulimit -n ${NOFILE} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$@"`,
      'bash',
      process.execPath,
      ...process.execArgv,
      ...process.argv.slice(1),
    ],
    { stdio: 'inherit', env: { ...process.env, FANOUT_NOFILE: String(NOFILE) } },
  );
  process.exit(again.status ?? 1);
}
/** The open-file limit every process of the bench runs under (each has its own). */
const openFiles = Number(
  /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ??
    NOFILE,
);

const { values } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '1000' },
    transport: { type: 'string', default: 'sse' },
    field: { type: 'string', default: 'component' },
    concurrency: { type: 'string', default: '100' },
    rate: { type: 'string', default: '200' },
    ttl: { type: 'string', default: '1000' },
    /** The gateway's V8 heap limit in MiB (`--max-old-space-size`), in place of the Dockerfile's. */
    'max-old-space-size': { type: 'string' },
    /** KEY=VALUE for the gateway's environment, after the bench's own (repeatable). */
    'gateway-env': { type: 'string', multiple: true, default: [] },
    /** `GATEWAY_WORKERS` for the gateway. */
    workers: { type: 'string', default: '1' },
    /** Client processes the crowd is spread over; `auto`: one per 12,000 connections. */
    clients: { type: 'string', default: 'auto' },
    /** The bare SSE server's open rate in the same run (SSE only); `--no-floor` skips it. */
    floor: { type: 'boolean', default: true },
    /** How the floor's workers share the port: node:cluster's round robin, or SO_REUSEPORT. */
    'floor-balance': { type: 'string', default: 'cluster' },
    /** The floor's processes; default: as many as serve the gateway. */
    'floor-workers': { type: 'string' },
  },
  allowNegative: true,
});
const subscribers = Number(values.subscribers);
const transport = values.transport === 'ws' ? 'ws' : 'sse';
const field = values.field === 'page' ? 'page' : 'component';
const concurrency = Number(values.concurrency);
const rate = Number(values.rate);
const ttlMs = Number(values.ttl);
const workers = Number(values.workers);
const floorBalance = values['floor-balance'] === 'reuseport' ? 'reuseport' : 'cluster';
if (!(subscribers >= 1) || !(concurrency >= 1) || !(rate > 0) || !(ttlMs >= 0)) {
  throw new Error('--subscribers, --concurrency and --rate must be positive, --ttl a number');
}
if (!Number.isInteger(workers) || workers < 1) throw new Error('--workers is a whole number ≥ 1');
if (values.transport !== transport || values.field !== field) {
  throw new Error('--transport is sse or ws, --field component or page');
}
if (values['floor-balance'] !== floorBalance) {
  throw new Error('--floor-balance is cluster or reuseport');
}
const floorWorkersAsked =
  values['floor-workers'] === undefined ? undefined : Number(values['floor-workers']);
if (
  floorWorkersAsked !== undefined &&
  (!Number.isInteger(floorWorkersAsked) || floorWorkersAsked < 1)
) {
  throw new Error('--floor-workers is a whole number ≥ 1');
}
const gatewayOverrides = Object.fromEntries(
  values['gateway-env'].map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--gateway-env takes KEY=VALUE, not ${pair}`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);
const PER_SOCKET = 10;
/** Connections the crowd opens: one per SSE subscriber, one per ten graphql-ws ones. */
const connections = transport === 'sse' ? subscribers : Math.ceil(subscribers / PER_SOCKET);
/** Open files a process needs besides its sockets (modules, pipes, the upstream's connections). */
const SPARE_FILES = 500;
const CONNECTIONS_PER_CLIENT = 12_000;
const clients =
  values.clients === 'auto'
    ? Math.max(1, Math.ceil(connections / CONNECTIONS_PER_CLIENT))
    : Number(values.clients);
if (!Number.isInteger(clients) || clients < 1) {
  throw new Error('--clients is a whole number ≥ 1, or auto');
}
// A client past its open-file limit would measure its own EMFILE: refused before anything starts.
if (Math.ceil(connections / clients) + SPARE_FILES > openFiles) {
  throw new Error(
    `bench/fanout: ${connections} connections over ${clients} client process(es) are ` +
      `${Math.ceil(connections / clients)} sockets per process, past this machine's open-file ` +
      `limit (${openFiles}): use --clients ${Math.ceil(connections / (openFiles - SPARE_FILES))} or more`,
  );
}
const PER_ADDRESS = 1_000;
const SETTLE_MS = 3_000;
const FANOUT_TIMEOUT_MS = ttlMs + 60_000;
/** How long one crowd may take to open: 500 a second at worst, and the client's own timeouts. */
const OPEN_TIMEOUT_MS = subscribers * 2 + 60_000;
// The floor's opening and the gateway's, the fan-out, and two minutes for the rest.
watchdog(2 * OPEN_TIMEOUT_MS + FANOUT_TIMEOUT_MS + 120_000, 'bench/fanout');

const QUERIES = {
  component:
    'subscription ($ids: [ID!]) { componentStatusChanged(ids: $ids) { component { id name } status } }',
  page: 'subscription { statusPageChanged { name fetchedAt status { indicator description } components { id name status } } }',
};
const PROBE =
  'subscription ($ids: [ID!]) { componentStatusChanged(ids: $ids) { status detectedAt } }';

const epoch = () => performance.timeOrigin + performance.now();
const round = (value: number | null | undefined, digits = 0) =>
  value === null || value === undefined || !Number.isFinite(value)
    ? null
    : Math.round(value * 10 ** digits) / 10 ** digits;

/** The gateway's /metrics, a few series of it; null once it no longer answers. */
async function scrape(origin: string) {
  try {
    const response = await fetch(`${origin}/metrics`, { signal: AbortSignal.timeout(15_000) });
    const text = await response.text();
    const sum = (name: string, filter = '') => {
      let total = 0;
      let seen = false;
      for (const line of text.split('\n')) {
        if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{'))
          continue;
        if (filter !== '' && !line.includes(filter)) continue;
        total += Number(line.slice(line.lastIndexOf(' ') + 1));
        seen = true;
      }
      return seen ? total : null;
    };
    return {
      heapUsed: sum('nodejs_heap_size_used_bytes'),
      heapTotal: sum('nodejs_heap_size_total_bytes'),
      rss: sum('process_resident_memory_bytes'),
      subscriptionsOpen: sum('graphql_subscriptions_open'),
      refused: sum('graphql_subscriptions_ended_total', 'reason="refused"') ?? 0,
      ended: sum('graphql_subscriptions_ended_total'),
      statusChanges: sum('status_changes_total'),
      executions: sum('graphql_subscription_executions_total'),
      fanOutSeconds: sum('graphql_subscription_fanout_seconds_sum'),
      /** The workers the replica's /metrics sums (`gateway_workers`), where it has workers. */
      workers: sum('gateway_workers'),
      workersReplaced: sum('gateway_workers_replaced_total'),
    };
  } catch {
    return null;
  }
}

/** The lowest heap in use over `reads` scrapes: garbage not yet collected inflates single reads. */
async function settledHeap(origin: string, reads = 6, gapMs = 400) {
  let lowest: number | null = null;
  let last: Awaited<ReturnType<typeof scrape>> = null;
  for (let i = 0; i < reads; i += 1) {
    const metrics = await scrape(origin);
    if (metrics?.heapUsed != null && (lowest === null || metrics.heapUsed < lowest)) {
      lowest = metrics.heapUsed;
    }
    last = metrics ?? last;
    await sleep(gapMs);
  }
  return { heapUsed: lowest, metrics: last };
}

/**
 * The processes of a server once its workers are up: `expected` of them forked, or none after a
 * few seconds (a build without workers runs one process whatever it is asked), or as many as there
 * are after 30 s. A worker is counted once it exists; a second more lets it listen.
 */
async function settledTree(server: ManagedProcess, expected: number): Promise<ProcessTree> {
  let tree = processTree(server.pid);
  if (expected <= 1 && tree.workers.length === 0) {
    // One worker may still be forked by a primary that serves none itself.
    await sleep(1_000);
    return processTree(server.pid);
  }
  const started = performance.now();
  while (tree.workers.length < expected) {
    const waited = performance.now() - started;
    if (waited > 30_000 || (tree.workers.length === 0 && waited > 5_000)) break;
    await sleep(200);
    tree = processTree(server.pid);
  }
  await sleep(1_000);
  return processTree(server.pid);
}

const describeTree = (tree: ProcessTree) =>
  tree.workers.length === 0
    ? '1 process'
    : `${tree.all.length} processes (a primary and ${tree.workers.length} worker${tree.workers.length === 1 ? '' : 's'})`;

/** CPU of `processes` over the window [start, stop] (ms each), in cores. */
const cpuShare = (start: number | null, stop: number | null, windowMs: number) =>
  start === null || stop === null ? null : round((stop - start) / windowMs, 2);

/** The machine's 1-minute load average at the start: the cores are shared with other work. */
const loadAtStart = round(loadavg()[0], 2);
const simulator = await spawnSimulator('realistic');
const spec = gatewaySpec(simulator);
const heapMiB = values['max-old-space-size'];
const nodeFlags =
  heapMiB === undefined
    ? spec.nodeFlags
    : (spec.nodeFlags ?? []).map((flag) =>
        flag.startsWith('--max-old-space-size=') ? `--max-old-space-size=${heapMiB}` : flag,
      );
// Room for the crowd, its sockets and this process's queries, and nothing else changed.
const room = String(subscribers + 1_000);
const gateway = await startContender({
  ...spec,
  ...(nodeFlags === undefined ? {} : { nodeFlags }),
  env: {
    ...spec.env,
    GATEWAY_WORKERS: String(workers),
    STATUS_CACHE_TTL_MS: String(ttlMs),
    MAX_SUBSCRIPTIONS: room,
    MAX_SSE_SUBSCRIPTIONS: room,
    MAX_SUBSCRIPTIONS_PER_CLIENT: room,
    MAX_SUBSCRIPTIONS_PER_CONNECTION: String(PER_SOCKET * 2),
    HTTP_MAX_CONNECTIONS: String(2 * subscribers + 2_000),
    MAX_WEBSOCKETS: room,
    MAX_WEBSOCKETS_PER_CLIENT: room,
    ...gatewayOverrides,
  },
});
let gatewayExit: string | null = null;
void gateway.exited.then((code) => {
  gatewayExit = code;
});
const tree = await settledTree(gateway, workers);
const serving = tree.serving.length;
console.log(
  `bench/fanout: the gateway runs ${describeTree(tree)} with GATEWAY_WORKERS=${workers}` +
    `${serving === workers ? '' : ` (this build serves with ${serving}, not ${workers})`}; ` +
    `the crowd, ${clients} client process${clients === 1 ? '' : 'es'}`,
);
/** Sockets each serving gateway process holds once the crowd is open, and whether that fits. */
const socketsPerProcess = Math.ceil(connections / serving);
const overFileLimit = socketsPerProcess + SPARE_FILES > openFiles;
if (overFileLimit) {
  console.warn(
    `bench/fanout: ${connections} connections over ${serving} gateway process${serving === 1 ? '' : 'es'} ` +
      `are about ${socketsPerProcess} sockets per process, past the open-file limit of ${openFiles} ` +
      `each process has here: past about ${openFiles - SPARE_FILES} the gateway cannot accept ` +
      `(EMFILE) and those subscribers fail. Holding them takes --workers ` +
      `${Math.ceil(connections / (openFiles - SPARE_FILES))} or more (GATEWAY_WORKERS).`,
  );
}

/** The open command both the floor's crowd and the gateway's get, but for the origin. */
const openCommand = (origin: string, count: number): CrowdOpen => ({
  origin,
  transport,
  subscribers: count,
  query: QUERIES[field],
  variables: {},
  perSocket: PER_SOCKET,
  concurrency: transport === 'ws' ? Math.max(1, Math.ceil(concurrency / PER_SOCKET)) : concurrency,
  perAddress: PER_ADDRESS,
});

/**
 * The floor: the bare SSE server with as many processes as the gateway serves with (node:cluster
 * workers when more than one: the fair floor for a gateway of workers pays the same hand-off),
 * opened by the same client code, processes and concurrency. As many subscribers as the gateway
 * gets, or as many as its processes may hold.
 */
async function measureFloor(variables: Record<string, unknown>) {
  const processes = floorWorkersAsked ?? serving;
  const count = Math.min(subscribers, processes * (openFiles - SPARE_FILES));
  const server = await startContender({
    name: 'sse-floor',
    script: 'bench/lib/sse-floor.ts',
    nodeFlags: [...(nodeFlags ?? []), '--import', 'tsx'],
    env: { FLOOR_WORKERS: String(processes), FLOOR_BALANCE: floorBalance },
    readyPath: '/health',
  });
  try {
    const floorTree = await settledTree(server, processes === 1 ? 0 : processes);
    const crowd = await startCrowd(clients, PER_ADDRESS);
    try {
      const rss0 = rssOf(floorTree.all);
      const cpu0 = [cpuOf(floorTree.all), crowd.cpu()];
      const opened = await crowd.open(
        { ...openCommand(server.origin, count), variables },
        OPEN_TIMEOUT_MS,
      );
      const cpu1 = [cpuOf(floorTree.all), crowd.cpu()];
      await sleep(1_000);
      const rss1 = rssOf(floorTree.all);
      // Its fan-out: one event to every stream, each serving process signalled at once.
      crowd.arm('FLOOR');
      await sleep(50);
      const sentAt = epoch();
      process.kill(server.pid, 'SIGUSR2');
      let receipts = await crowd.report(false, 30_000);
      while (receipts.received < receipts.live && epoch() < sentAt + FANOUT_TIMEOUT_MS) {
        await sleep(100);
        receipts = await crowd.report(false, 30_000);
      }
      receipts = await crowd.report(true, 30_000);
      const seconds = (opened.settledAt - opened.startedAt) / 1_000;
      const window = opened.settledAt - opened.startedAt;
      return {
        processes: floorTree.all.length,
        serving: floorTree.serving.length,
        balance: floorBalance,
        requested: count,
        open: opened.open,
        failed: opened.failed,
        seconds: round(seconds, 2),
        perSecond: round(opened.open / seconds),
        serverCpuShare: cpuShare(cpu0[0] ?? null, cpu1[0] ?? null, window),
        crowdCpuShare: cpuShare(cpu0[1] ?? null, cpu1[1] ?? null, window),
        rssPerSubscriberBytes:
          rss0 === null || rss1 === null || opened.open === 0
            ? null
            : Math.round((rss1 - rss0) / opened.open),
        alive: floorTree.all.every(isAlive),
        fanout: {
          live: receipts.live,
          received: receipts.received,
          sentToFirstMs: receipts.first === null ? null : round(receipts.first - sentAt),
          sentToP50Ms: receipts.p50 === null ? null : round(receipts.p50 - sentAt),
          sentToP99Ms: receipts.p99 === null ? null : round(receipts.p99 - sentAt),
          sentToLastMs: receipts.last === null ? null : round(receipts.last - sentAt),
          firstToLastMs:
            receipts.last === null || receipts.first === null
              ? null
              : round(receipts.last - receipts.first),
        },
      };
    } finally {
      await crowd.close();
    }
  } finally {
    await server.stop();
  }
}

type FloorRun = Awaited<ReturnType<typeof measureFloor>>;

const sayFloor = (run: FloorRun) =>
  console.log(
    `bench/fanout: the floor (${run.serving} process${run.serving === 1 ? '' : 'es'}) opened ${run.open} in ${run.seconds} s: ${run.perSecond}/s; one event to all: first→last ${run.fanout.firstToLastMs} ms, last ${run.fanout.sentToLastMs} ms after it was sent (${run.fanout.received} of ${run.fanout.live})`,
  );

/**
 * The floor of the run: its two openings, before the gateway's crowd and after it, averaged, so
 * that a machine busier during one of them (the two cores are shared) moves the ratio less.
 */
function bracket(before: FloorRun | null, after: FloorRun | null) {
  const runs = [before, after].filter((run): run is FloorRun => run !== null);
  const [first] = runs;
  if (first === undefined) return null;
  const rates = runs.map((run) => run.perSecond).filter((rate): rate is number => rate !== null);
  return {
    processes: first.processes,
    serving: first.serving,
    balance: first.balance,
    requested: first.requested,
    /** Opens a second, the mean of the runs. */
    perSecond: rates.length ? round(rates.reduce((a, b) => a + b, 0) / rates.length) : null,
    runs,
  };
}

try {
  const feed = await simulator.feed();
  const leaf = feed.components.find((component) => !component.group);
  if (!leaf) throw new Error('the feed has no leaf component');
  const newStatus = leaf.status === 'major_outage' ? 'operational' : 'major_outage';
  const variables = field === 'component' ? { ids: [leaf.id] } : {};

  // 0. The floor, while the gateway waits; again once the gateway's crowd is gone (below).
  const withFloor = values.floor && transport === 'sse';
  const floorBefore = withFloor ? await measureFloor(variables) : null;
  if (floorBefore) sayFloor(floorBefore);

  // The cached query, warm; the gateway idle.
  for (let i = 0; i < 20; i += 1) await postGraphql(gateway.url, TINY_BODY);
  await sleep(1_000);
  const before = await settledHeap(gateway.origin);
  const rssBefore = rssOf(tree.all);
  const crowd = await startCrowd(clients, PER_ADDRESS);
  try {
    // 1. The crowd opens, after the probe.
    await crowd.probe(gateway.origin, { query: PROBE, variables: { ids: [leaf.id] } });
    const openCpu0 = [cpuOf(tree.all), crowd.cpu()];
    const opened = await crowd.open(
      { ...openCommand(gateway.origin, subscribers), variables },
      OPEN_TIMEOUT_MS,
    );
    const openCpu1 = [cpuOf(tree.all), crowd.cpu()];
    const openWindow = opened.settledAt - opened.startedAt;
    const openSeconds = openWindow / 1_000;

    // 2. Idle.
    await sleep(SETTLE_MS);
    const after = await settledHeap(gateway.origin);
    const rssIdle = rssOf(tree.all);
    const openFilesPerProcess = tree.serving.map(({ pid }) => openFilesOf(pid));
    const idle = await crowd.report(false, 10_000);
    const perSubscriber = (a: number | null | undefined, b: number | null | undefined) =>
      a == null || b == null || idle.live === 0 ? null : Math.round((a - b) / idle.live);
    // /metrics answers for the replica when it says it sums the serving processes
    // (`gateway_workers`), or when its RSS is theirs together; a worker that answers for itself
    // alone shows a fraction of it, and its heap is not the replica's.
    const servingRss = rssOf(tree.serving);
    const metricsCoverage =
      after.metrics?.rss == null || servingRss === null ? null : after.metrics.rss / servingRss;
    const heapScope =
      serving === 1 ||
      after.metrics?.workers === serving ||
      (metricsCoverage !== null && metricsCoverage > 0.75)
        ? 'replica'
        : 'one worker';

    // 3. The change, under paced cached queries.
    const queries = pacedQueries(gateway.url, TINY_BODY, rate);
    await sleep(2_000);
    const baselineStart = epoch();
    const cpuBaseline0 = cpuOf(tree.all);
    await sleep(2_000);
    const cpuBaseline1 = cpuOf(tree.all);
    const baselineEnd = epoch();
    // Changes land at a random point of the poll cycle, as real ones do.
    await sleep(Math.random() * ttlMs);
    crowd.arm(field === 'component' ? newStatus.toUpperCase() : undefined);
    await sleep(50);
    const cpuChange0 = cpuOf(tree.all);
    const changedAt = epoch();
    const control = await fetch(`${simulator.origin}/_simulator/status-feed`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ components: { [leaf.id]: newStatus } }),
    });
    if (!control.ok) throw new Error(`control API: ${control.status}`);
    let receipts = await crowd.report(false, 10_000);
    const deadline = changedAt + FANOUT_TIMEOUT_MS;
    while (epoch() < deadline && gatewayExit === null) {
      receipts = await crowd.report(false, 30_000);
      if (receipts.probeReceivedAt !== null && receipts.received >= receipts.live) break;
      await sleep(100);
    }
    await sleep(300);
    const cpuChange1 = cpuOf(tree.all);
    const changeEnd = epoch();
    receipts = await crowd.report(true, 30_000);
    await sleep(1_000);
    const samples = await queries.stop();
    const end = await scrape(gateway.origin);
    const final = await crowd.report(false, 30_000);
    await crowd.close();
    const floorAfter = withFloor ? await measureFloor(variables) : null;
    if (floorAfter) sayFloor(floorAfter);
    const floor = bracket(floorBefore, floorAfter);
    const treeAtEnd = processTree(gateway.pid);
    const survivors = tree.all.filter(isAlive).length;
    const original = new Set(tree.all.map(({ pid, startTime }) => `${pid}:${startTime}`));
    const replaced = treeAtEnd.workers.filter(
      ({ pid, startTime }) => !original.has(`${pid}:${startTime}`),
    ).length;
    const allAlive = gatewayExit === null && survivors === tree.all.length;

    const baselineRate =
      cpuBaseline0 === null || cpuBaseline1 === null
        ? null
        : (cpuBaseline1 - cpuBaseline0) / (baselineEnd - baselineStart);
    const eventCpu =
      cpuChange0 === null || cpuChange1 === null || baselineRate === null
        ? null
        : cpuChange1 - cpuChange0 - baselineRate * (changeEnd - changedAt);
    const foundAt = receipts.probeDetectedAt ?? receipts.first;
    const openPerSecond = round(opened.open / openSeconds);
    const result = {
      subscribers,
      transport,
      field,
      document: QUERIES[field],
      ttlMs,
      nodeFlags,
      openFilesLimit: openFiles,
      /** 1-minute load averages at the start and the end (2 cores: above 2, work was waiting). */
      loadAverage: [loadAtStart, round(loadavg()[0], 2)],
      gatewayEnv: gatewayOverrides,
      workers: {
        requested: workers,
        /** The started process and what it forked. */
        processes: tree.all.length,
        /** Those that hold connections: the workers, or the one process. */
        serving,
        pids: tree.all.map(({ pid }) => pid),
      },
      clients,
      open: {
        requested: subscribers,
        open: opened.open,
        peakOpen: opened.peakOpen,
        gatewayOpen: after.metrics?.subscriptionsOpen ?? null,
        refused: opened.refused,
        gatewayRefused: after.metrics?.refused ?? null,
        failed: opened.failed,
        connections: opened.connections,
        sourceAddresses: opened.addresses,
        seconds: round(openSeconds, 2),
        perSecond: openPerSecond,
        /** Answered, opened or refused, a second. */
        attemptsPerSecond: round(subscribers / openSeconds),
        /** CPU time over the opening's wall time, summed over processes: 1 is one core throughout. */
        gatewayCpuShare: cpuShare(openCpu0[0] ?? null, openCpu1[0] ?? null, openWindow),
        crowdCpuShare: cpuShare(openCpu0[1] ?? null, openCpu1[1] ?? null, openWindow),
        /**
         * The gateway's opens a second over the floor's, in the same run (SSE); none when some
         * were not opened: the time spent failing them is not an open rate.
         */
        floorRatio:
          floor?.perSecond && openPerSecond !== null && opened.open >= subscribers
            ? round(openPerSecond / floor.perSecond, 2)
            : null,
      },
      floor,
      openFiles: {
        limit: openFiles,
        /** Per serving gateway process, once the crowd is idle. */
        gatewayPerProcess: openFilesPerProcess,
        /** Whether the crowd needs more sockets per gateway process than the limit allows. */
        overLimit: overFileLimit,
        /** Whether a gateway process reached the limit (EMFILE: connections it cannot accept). */
        reached: openFilesPerProcess.some((count) => count !== null && count >= openFiles - 50),
      },
      idle: {
        subscribers: idle.live,
        /** `replica`: /metrics covers every serving process; `one worker`: heap is not reachable. */
        heapScope,
        metricsRssCoverage: round(metricsCoverage, 2),
        heapBeforeMiB: mib(before.heapUsed),
        heapAfterMiB: mib(after.heapUsed),
        heapPerSubscriberBytes:
          heapScope === 'replica' ? perSubscriber(after.heapUsed, before.heapUsed) : null,
        rssBeforeMiB: mib(rssBefore),
        rssAfterMiB: mib(rssIdle),
        rssPerSubscriberBytes: perSubscriber(rssIdle, rssBefore),
      },
      fanout: {
        live: receipts.live,
        received: receipts.received,
        unexpected: receipts.unexpected,
        allReceived: receipts.live > 0 && receipts.received >= receipts.live,
        changeRequestToFoundMs: round(foundAt === null ? null : foundAt - changedAt),
        foundBy: receipts.probeDetectedAt === null ? 'first receipt' : 'probe detectedAt',
        foundToFirstMs: round(
          receipts.first === null || foundAt === null ? null : receipts.first - foundAt,
        ),
        foundToP50Ms: round(
          receipts.p50 === null || foundAt === null ? null : receipts.p50 - foundAt,
        ),
        foundToP99Ms: round(
          receipts.p99 === null || foundAt === null ? null : receipts.p99 - foundAt,
        ),
        foundToLastMs: round(
          receipts.last === null || foundAt === null ? null : receipts.last - foundAt,
        ),
        firstToLastMs: round(
          receipts.last === null || receipts.first === null ? null : receipts.last - receipts.first,
        ),
        changeRequestToLastMs: round(receipts.last === null ? null : receipts.last - changedAt),
        gatewayCpuMs: round(eventCpu),
        gatewayCpuPerSubscriberMs: round(
          eventCpu === null || receipts.live === 0 ? null : eventCpu / receipts.live,
          3,
        ),
        gatewayCpuWindowMs: round(changeEnd - changedAt),
        /** Subscription events executed for the change: one per distinct operation when shared. */
        executions:
          // A counter with labels has no series until its first count: none before is 0.
          end?.executions == null ? null : end.executions - (after.metrics?.executions ?? 0),
        /**
         * The gateway's own fan-out of the event (`graphql_subscription_fanout_seconds`): from the
         * event to the last subscriber's write, summed over the shared subscriptions (the crowd's
         * and the probe's, whose single write is next to nothing). What the crowd's receipts add is
         * its own reading, on the same two cores.
         */
        gatewayFanOutMs:
          end?.fanOutSeconds == null
            ? null
            : round((end.fanOutSeconds - (after.metrics?.fanOutSeconds ?? 0)) * 1000),
        baselineCpuShare: round(baselineRate, 3),
        rssMiB: mib(rssOf(tree.all)),
        peakRssMiB: mib(peakRssOf(tree.all)),
        heapUsedMiB: mib(end?.heapUsed),
      },
      queries: {
        perSecond: rate,
        before: latencySummary(samples, baselineStart, baselineEnd),
        duringFanout: latencySummary(samples, foundAt ?? changedAt, receipts.last ?? changeEnd),
        changeToEnd: latencySummary(samples, changedAt, changeEnd),
      },
      end: {
        gatewayAlive: gatewayExit === null,
        gatewayExit,
        /** Every process of the start (primary and workers) still the same one at the end. */
        allProcessesAlive: allAlive,
        processesAlive: survivors,
        workersReplaced: replaced,
        /** `gateway_workers_replaced_total` over the run, where /metrics has it. */
        metricsWorkersReplaced:
          end?.workersReplaced == null
            ? null
            : end.workersReplaced - (before.metrics?.workersReplaced ?? 0),
        subscriptionsOpen: end?.subscriptionsOpen ?? null,
        clientSideLive: final.live,
        endedByServer: final.ended,
        errors: final.errors,
        gatewayLog: Object.fromEntries(
          Object.entries(gateway.logCounts()).filter(([key]) => !key.startsWith('info')),
        ),
      },
    };

    const directory = resolve(ROOT, 'bench/results');
    mkdirSync(directory, { recursive: true });
    const file = resolve(directory, `fanout-${timestamp()}.json`);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    const text = (value: unknown) =>
      value === null || value === undefined
        ? '—'
        : typeof value === 'object'
          ? JSON.stringify(value)
          : String(value);
    const rows: [string, unknown][] = [
      ['subscribers (transport, field)', `${subscribers} (${transport}, ${field})`],
      [
        'gateway processes (serving)',
        `${tree.all.length} (${serving}; GATEWAY_WORKERS=${workers})`,
      ],
      ['crowd processes', String(clients)],
      ['load average (start, end)', text(result.loadAverage)],
      [
        'open / gateway count',
        `${result.open.open} / ${text(result.open.gatewayOpen)} (peak ${result.open.peakOpen})`,
      ],
      [
        'refused (client / gateway)',
        `${text(result.open.refused)} / ${text(result.open.gatewayRefused)}`,
      ],
      ['failed', text(result.open.failed)],
      [
        'open files per gateway process',
        `${text(openFilesPerProcess)} of ${openFiles}${result.openFiles.reached ? ' (limit reached)' : ''}`,
      ],
      [
        'open rate (CPU: gateway, crowd)',
        `${text(result.open.perSecond)} /s (${result.open.seconds} s; ${text(result.open.gatewayCpuShare)}, ${text(result.open.crowdCpuShare)} cores)`,
      ],
      [
        'floor open rate (CPU: floor, crowd)',
        floor === null
          ? '—'
          : `${text(floor.perSecond)} /s (${floor.runs.map((run) => `${run.open} in ${run.seconds} s, ${text(run.perSecond)}/s; ${text(run.serverCpuShare)}, ${text(run.crowdCpuShare)} cores`).join('; then ')}); gateway/floor ${text(result.open.floorRatio)}`,
      ],
      [
        'heap before → idle',
        `${text(result.idle.heapBeforeMiB)} → ${text(result.idle.heapAfterMiB)} MiB (${heapScope})`,
      ],
      ['heap per idle subscriber', `${text(result.idle.heapPerSubscriberBytes)} B`],
      [
        'RSS before → idle',
        `${text(result.idle.rssBeforeMiB)} → ${text(result.idle.rssAfterMiB)} MiB`,
      ],
      ['RSS per idle subscriber', `${text(result.idle.rssPerSubscriberBytes)} B`],
      ['received / live', `${receipts.received} / ${receipts.live}`],
      [
        'floor fan-out: sent → first / p50 / p99 / last',
        floor === null
          ? '—'
          : floor.runs
              .map(
                ({ fanout: f }) =>
                  `${text(f.sentToFirstMs)} / ${text(f.sentToP50Ms)} / ${text(f.sentToP99Ms)} / ${text(f.sentToLastMs)} ms (first→last ${text(f.firstToLastMs)}; ${f.received} of ${f.live})`,
              )
              .join('; then '),
      ],
      [
        'change request → found',
        `${text(result.fanout.changeRequestToFoundMs)} ms (${result.fanout.foundBy})`,
      ],
      [
        'found → first / p50 / p99 / last',
        `${text(result.fanout.foundToFirstMs)} / ${text(result.fanout.foundToP50Ms)} / ${text(result.fanout.foundToP99Ms)} / ${text(result.fanout.foundToLastMs)} ms`,
      ],
      ['change request → last', `${text(result.fanout.changeRequestToLastMs)} ms`],
      [
        'gateway CPU for the event',
        `${text(result.fanout.gatewayCpuMs)} ms (${text(result.fanout.gatewayCpuPerSubscriberMs)} ms per subscriber)`,
      ],
      ['executions for the event', text(result.fanout.executions)],
      ['gateway fan-out (event → last write)', `${text(result.fanout.gatewayFanOutMs)} ms`],
      ['RSS now / peak', `${text(result.fanout.rssMiB)} / ${text(result.fanout.peakRssMiB)} MiB`],
      [
        'cached queries before (p50/p99/max)',
        `${text(result.queries.before.p50)} / ${text(result.queries.before.p99)} / ${text(result.queries.before.max)} ms`,
      ],
      [
        'cached queries during fan-out',
        `${text(result.queries.duringFanout.p50)} / ${text(result.queries.duringFanout.p99)} / ${text(result.queries.duringFanout.max)} ms (${result.queries.duringFanout.sent} sent, ${result.queries.duringFanout.failed} failed)`,
      ],
      [
        'cached queries change → end',
        `${text(result.queries.changeToEnd.p50)} / ${text(result.queries.changeToEnd.p99)} / ${text(result.queries.changeToEnd.max)} ms (${result.queries.changeToEnd.sent} sent)`,
      ],
      ['gateway alive at the end', result.end.gatewayAlive ? 'yes' : `no (${gatewayExit})`],
      [
        'every gateway process alive',
        `${allAlive ? 'yes' : 'no'} (${survivors} of ${tree.all.length}; ${replaced} replaced)`,
      ],
      ['ended by the server', text(result.end.endedByServer)],
      ['errors on open subscriptions', text(result.end.errors)],
      ['gateway warnings and errors', text(result.end.gatewayLog)],
    ];
    const width = Math.max(...rows.map(([label]) => label.length));
    console.log(rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n'));

    // The summary, one row of docs/performance.md's table "The fan-out bench with workers".
    const kib = (bytes: number | null) => (bytes === null ? '—' : `${(bytes / 1024).toFixed(1)}`);
    const summary: [string, string][] = [
      ['subscribers', String(subscribers)],
      ['transport', transport],
      ['workers', String(workers)],
      ['clients', String(clients)],
      ['gateway processes', `${tree.all.length} (${serving} serving)`],
      ['opened', `${opened.open} in ${text(result.open.seconds)} s`],
      ['opens/s', text(openPerSecond)],
      [
        'floor opens/s',
        floor === null ? '—' : `${text(floor.perSecond)} (${floor.serving} serving)`,
      ],
      ['ratio', text(result.open.floorRatio)],
      ['heap/idle sub KiB', kib(result.idle.heapPerSubscriberBytes)],
      ['RSS/sub KiB', kib(result.idle.rssPerSubscriberBytes)],
      ['first→last ms', text(result.fanout.firstToLastMs)],
      [
        'floor first→last ms',
        floor === null
          ? '—'
          : floor.runs.map(({ fanout }) => text(fanout.firstToLastMs)).join(', '),
      ],
      [
        'detectedAt→first/last ms',
        `${text(result.fanout.foundToFirstMs)} / ${text(result.fanout.foundToLastMs)}`,
      ],
      [
        'queries p50/p99 ms',
        result.queries.duringFanout.failed > 0
          ? `${text(result.queries.duringFanout.p50)} / ${text(result.queries.duringFanout.p99)} (${result.queries.duringFanout.failed} of ${result.queries.duringFanout.sent} failed)`
          : `${text(result.queries.duringFanout.p50)} / ${text(result.queries.duringFanout.p99)}`,
      ],
      ['all alive', allAlive ? 'yes' : 'no'],
    ];
    console.log(`\n| ${summary.map(([label]) => label).join(' | ')} |`);
    console.log(`| ${summary.map(() => '---').join(' | ')} |`);
    console.log(`| ${summary.map(([, value]) => value).join(' | ')} |`);
    console.log(`\nwritten to ${file}`);
    if (overFileLimit || result.openFiles.reached) {
      console.warn(
        `bench/fanout: a gateway process ${result.openFiles.reached ? 'reached' : 'would pass'} its open-file limit (${openFiles}); ` +
          `${subscribers - opened.open} of ${subscribers} subscribers were not opened. Run with --workers ${Math.ceil(connections / (openFiles - SPARE_FILES))} or more.`,
      );
    }
    if (!allAlive || !result.fanout.allReceived || opened.open < subscribers) {
      process.exitCode = 1;
    }
  } finally {
    await crowd.close();
  }
} finally {
  await gateway.stop();
  await simulator.stop();
}
