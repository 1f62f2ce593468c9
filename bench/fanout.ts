/**
 * Fan-out to a crowd (issue 26): the production gateway (`dist/main.js`, the Dockerfile's node
 * flags, NODE_ENV=production) with its subscription limits raised to allow the crowd, the
 * simulator's realistic feed, STATUS_CACHE_TTL_MS=1000.
 *
 * 1. A child process (`bench/lib/fanout-client.ts`) opens `--subscribers` subscribers, over SSE
 *    (one HTTP connection each) or graphql-ws (10 per socket), from loopback source addresses
 *    127.0.1.1, 127.0.1.2, … (1,000 connections each), plus one SSE probe that selects
 *    `detectedAt`: the time the poll that found the change fetched the feed.
 * 2. Once they are idle, the gateway's heap (`nodejs_heap_size_used_bytes` from /metrics, the
 *    lowest of several reads) and RSS are compared with before: the cost of an idle subscriber.
 * 3. Cached queries (`{ statusPage { status { indicator } } }`) go out at `--rate` a second from
 *    this process; a leaf component is changed through the simulator's control API, and the bench
 *    waits until every subscriber has the change. The gateway's CPU (utime+stime in /proc) over
 *    the event, less what the queries cost at the same rate before it, is the event's CPU.
 *
 * `npm run bench:fanout -- --subscribers 1000 [--transport sse|ws] [--field component|page]`
 * (`--concurrency 100` opens at once, `--rate 200` queries a second, `--ttl 1000`, and
 * `--gateway-env KEY=VALUE`, repeatable, to run the gateway with other settings, and
 * `--max-old-space-size MiB` in place of the Dockerfile's heap limit, for a replica sized for crowds).
 * Writes bench/results/fanout-<timestamp>.json. The bench re-runs itself under `ulimit -n
 * 1048576` so that the gateway and the crowd may hold that many sockets.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type {
  CrowdCommand,
  OpenCommand,
  OpenedReport,
  ReceiptReport,
} from './lib/fanout-client.js';
import { timestamp } from './lib/load.js';
import { latencySummary, pacedQueries } from './lib/paced-queries.js';
import {
  gatewaySpec,
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
  },
});
const subscribers = Number(values.subscribers);
const transport = values.transport === 'ws' ? 'ws' : 'sse';
const field = values.field === 'page' ? 'page' : 'component';
const concurrency = Number(values.concurrency);
const rate = Number(values.rate);
const ttlMs = Number(values.ttl);
if (!(subscribers >= 1) || !(concurrency >= 1) || !(rate > 0) || !(ttlMs >= 0)) {
  throw new Error('--subscribers, --concurrency and --rate must be positive, --ttl a number');
}
if (values.transport !== transport || values.field !== field) {
  throw new Error('--transport is sse or ws, --field component or page');
}
const gatewayOverrides = Object.fromEntries(
  values['gateway-env'].map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--gateway-env takes KEY=VALUE, not ${pair}`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);
const PER_SOCKET = 10;
// The gateway holds a socket per SSE subscriber (and the crowd as many): past the limit, accept()
// fails with EMFILE, and those failures, not the gateway's design, would be measured.
if (transport === 'sse' && subscribers + 500 > openFiles) {
  console.warn(
    `bench/fanout: ulimit -n is ${openFiles} here and could not be raised (CAP_SYS_RESOURCE?): ` +
      `${subscribers} SSE subscribers need about ${subscribers + 500} descriptors per process`,
  );
}
const PER_ADDRESS = 1_000;
const SETTLE_MS = 3_000;
const FANOUT_TIMEOUT_MS = ttlMs + 60_000;
// Opening at 100 a second at worst, the fan-out, and a minute for the rest.
watchdog(subscribers * 10 + FANOUT_TIMEOUT_MS + 120_000, 'bench/fanout');

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
      executions: sum('graphql_subscription_executions_total') ?? 0,
      fanOutSeconds: sum('graphql_subscription_fanout_seconds_sum') ?? 0,
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

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;
/** CPU time (user + system) of `pid` so far, in ms; null once it is gone. */
function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of the whole line: the 12th and 13th after the command's ")".
    return ((Number(fields[11]) + Number(fields[12])) * 1_000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** The crowd's process, spoken to over IPC. */
function startCrowd() {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--max-old-space-size=4096', '--import', 'tsx', resolve(ROOT, 'bench/lib/fanout-client.ts')],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  process.on('exit', () => child.kill('SIGKILL'));
  const waiting: ((message: { type: string }) => void)[] = [];
  child.on('message', (message: { type: string }) => waiting.shift()?.(message));
  const exited = new Promise<void>((done) => child.on('exit', () => done()));
  const ask = <T>(command: CrowdCommand, timeoutMs: number) =>
    new Promise<T>((answer, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`the crowd did not answer ${command.type}`)),
        timeoutMs,
      );
      waiting.push((message) => {
        clearTimeout(timer);
        if (message.type === 'failed') fail(new Error(`the crowd: ${JSON.stringify(message)}`));
        else answer(message as T);
      });
      child.send(command);
    });
  return {
    pid: child.pid,
    ask,
    tell: (command: CrowdCommand) => child.send(command),
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send({ type: 'close' } satisfies CrowdCommand);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const simulator = await spawnSimulator('realistic');
const spec = gatewaySpec(simulator);
// Room for the crowd, its sockets and this process's queries, and nothing else changed.
const room = String(subscribers + 1_000);
const heapMiB = values['max-old-space-size'];
const gateway = await startContender({
  ...spec,
  ...(heapMiB === undefined
    ? {}
    : {
        nodeFlags: (spec.nodeFlags ?? []).map((flag) =>
          flag.startsWith('--max-old-space-size=') ? `--max-old-space-size=${heapMiB}` : flag,
        ),
      }),
  env: {
    ...spec.env,
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
const crowd = startCrowd();

try {
  const feed = await simulator.feed();
  const leaf = feed.components.find((component) => !component.group);
  if (!leaf) throw new Error('the feed has no leaf component');
  const newStatus = leaf.status === 'major_outage' ? 'operational' : 'major_outage';

  // The cached query, warm; the gateway idle.
  for (let i = 0; i < 20; i += 1) await postGraphql(gateway.url, TINY_BODY);
  await sleep(1_000);
  const before = await settledHeap(gateway.origin);
  const rssBefore = gateway.rss();

  // 1. The crowd opens.
  const command: OpenCommand = {
    type: 'open',
    origin: gateway.origin,
    transport,
    subscribers,
    query: QUERIES[field],
    variables: field === 'component' ? { ids: [leaf.id] } : {},
    perSocket: PER_SOCKET,
    concurrency:
      transport === 'ws' ? Math.max(1, Math.ceil(concurrency / PER_SOCKET)) : concurrency,
    perAddress: PER_ADDRESS,
    probe: { query: PROBE, variables: { ids: [leaf.id] } },
  };
  const openCpu0 = [cpuMs(gateway.pid), crowd.pid === undefined ? null : cpuMs(crowd.pid)];
  const opened = await crowd.ask<OpenedReport>(command, subscribers * 100 + 60_000);
  const openCpu1 = [cpuMs(gateway.pid), crowd.pid === undefined ? null : cpuMs(crowd.pid)];
  const cpuShare = (i: number) => {
    const [start, stop] = [openCpu0[i], openCpu1[i]];
    return start == null || stop == null
      ? null
      : round((stop - start) / (opened.settledAt - opened.startedAt), 2);
  };
  const openSeconds = (opened.settledAt - opened.startedAt) / 1_000;

  // 2. Idle.
  await sleep(SETTLE_MS);
  const after = await settledHeap(gateway.origin);
  const rssIdle = gateway.rss();
  const idle = await crowd.ask<ReceiptReport>({ type: 'report' }, 10_000);
  const perSubscriber = (a: number | null | undefined, b: number | null | undefined) =>
    a == null || b == null || idle.live === 0 ? null : Math.round((a - b) / idle.live);

  // 3. The change, under paced cached queries.
  const queries = pacedQueries(gateway.url, TINY_BODY, rate);
  await sleep(2_000);
  const baselineStart = epoch();
  const cpuBaseline0 = cpuMs(gateway.pid);
  await sleep(2_000);
  const cpuBaseline1 = cpuMs(gateway.pid);
  const baselineEnd = epoch();
  // Changes land at a random point of the poll cycle, as real ones do.
  await sleep(Math.random() * ttlMs);
  crowd.tell({
    type: 'arm',
    ...(field === 'component' ? { status: newStatus.toUpperCase() } : {}),
  });
  await sleep(50);
  const cpuChange0 = cpuMs(gateway.pid);
  const changedAt = epoch();
  const control = await fetch(`${simulator.origin}/_simulator/status-feed`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ components: { [leaf.id]: newStatus } }),
  });
  if (!control.ok) throw new Error(`control API: ${control.status}`);
  let receipts = await crowd.ask<ReceiptReport>({ type: 'report' }, 10_000);
  const deadline = changedAt + FANOUT_TIMEOUT_MS;
  while (epoch() < deadline && gatewayExit === null) {
    receipts = await crowd.ask<ReceiptReport>({ type: 'report' }, 30_000);
    if (receipts.probeReceivedAt !== null && receipts.received >= receipts.live) break;
    await sleep(100);
  }
  await sleep(300);
  const cpuChange1 = cpuMs(gateway.pid);
  const changeEnd = epoch();
  await sleep(1_000);
  const samples = await queries.stop();
  const end = await scrape(gateway.origin);
  const final = await crowd.ask<ReceiptReport>({ type: 'report' }, 30_000);

  const baselineRate =
    cpuBaseline0 === null || cpuBaseline1 === null
      ? null
      : (cpuBaseline1 - cpuBaseline0) / (baselineEnd - baselineStart);
  const eventCpu =
    cpuChange0 === null || cpuChange1 === null || baselineRate === null
      ? null
      : cpuChange1 - cpuChange0 - baselineRate * (changeEnd - changedAt);
  const foundAt = receipts.probeDetectedAt ?? receipts.first;
  const result = {
    subscribers,
    transport,
    field,
    document: QUERIES[field],
    ttlMs,
    nodeFlags: spec.nodeFlags,
    openFilesLimit: openFiles,
    gatewayEnv: gatewayOverrides,
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
      perSecond: round(opened.open / openSeconds),
      /** Answered, opened or refused, a second. */
      attemptsPerSecond: round(subscribers / openSeconds),
      /** CPU time over the opening's wall time: 1 is one core busy throughout. */
      gatewayCpuShare: cpuShare(0),
      crowdCpuShare: cpuShare(1),
    },
    idle: {
      subscribers: idle.live,
      heapBeforeMiB: mib(before.heapUsed),
      heapAfterMiB: mib(after.heapUsed),
      heapPerSubscriberBytes: perSubscriber(after.heapUsed, before.heapUsed),
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
        end === null || after.metrics === null ? null : end.executions - after.metrics.executions,
      /**
       * The gateway's own fan-out of the event (`graphql_subscription_fanout_seconds`): from the
       * event to the last subscriber's write, summed over the shared subscriptions (the crowd's
       * and the probe's, whose single write is next to nothing). What the crowd's receipts add is
       * its own reading, on the same two cores.
       */
      gatewayFanOutMs:
        end === null || after.metrics === null
          ? null
          : round((end.fanOutSeconds - after.metrics.fanOutSeconds) * 1000),
      baselineCpuShare: round(baselineRate, 3),
      rssMiB: mib(gateway.rss()),
      peakRssMiB: mib(gateway.peakRss()),
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
      'open / gateway count',
      `${result.open.open} / ${text(result.open.gatewayOpen)} (peak ${result.open.peakOpen})`,
    ],
    [
      'refused (client / gateway)',
      `${text(result.open.refused)} / ${text(result.open.gatewayRefused)}`,
    ],
    ['failed', text(result.open.failed)],
    [
      'open rate (CPU: gateway, crowd)',
      `${text(result.open.perSecond)} /s (${result.open.seconds} s; ${text(result.open.gatewayCpuShare)}, ${text(result.open.crowdCpuShare)} cores)`,
    ],
    [
      'heap before → idle',
      `${text(result.idle.heapBeforeMiB)} → ${text(result.idle.heapAfterMiB)} MiB`,
    ],
    ['heap per idle subscriber', `${text(result.idle.heapPerSubscriberBytes)} B`],
    [
      'RSS before → idle',
      `${text(result.idle.rssBeforeMiB)} → ${text(result.idle.rssAfterMiB)} MiB`,
    ],
    ['RSS per idle subscriber', `${text(result.idle.rssPerSubscriberBytes)} B`],
    ['received / live', `${receipts.received} / ${receipts.live}`],
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
    ['ended by the server', text(result.end.endedByServer)],
    ['errors on open subscriptions', text(result.end.errors)],
    ['gateway warnings and errors', text(result.end.gatewayLog)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log(rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n'));
  console.log(`\nwritten to ${file}`);
  if (!result.end.gatewayAlive || !result.fanout.allReceived) process.exitCode = 1;
} finally {
  await crowd.close();
  await gateway.stop();
  await simulator.stop();
}
