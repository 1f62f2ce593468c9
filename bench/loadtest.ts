/**
 * Load test of the production gateway over the simulator (realistic preset), both in child
 * processes on loopback: a mix of the page tree, component lookups and verifyContract at 100
 * connections, healthy first, then with upstream faults switched on and off during the run.
 *
 * `npm run loadtest [-- --duration 20] [-- --connections 100]`. Writes
 * bench/results/loadtest-<timestamp>.json; exits 1 only when the healthy run saw errors.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  formatCounts,
  type LoadRequest,
  type LoadSummary,
  markdownTable,
  runLoad,
  timestamp,
} from './lib/load.js';
import {
  type Fault,
  type GraphqlServer,
  gatewaySpec,
  mib,
  postGraphql,
  type RequestCounts,
  ROOT,
  type SimulatorProcess,
  spawnSimulator,
  startContender,
  watchdog,
} from './lib/processes.js';
import { componentBody, PAGE_TREE_BODY, VERIFY_BODIES, VERIFY_TYPENAME } from './lib/queries.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '20' },
    connections: { type: 'string', default: '100' },
  },
});
const durationSeconds = Number(values.duration);
const connections = Number(values.connections);
if (!(durationSeconds > 0 && durationSeconds <= 600) || !(connections > 0 && connections <= 1000)) {
  console.error('--duration must be 1..600 seconds and --connections 1..1000');
  process.exit(1);
}
if (!existsSync(resolve(ROOT, 'dist/main.js'))) {
  console.error('dist/main.js is missing: run `npm run build` first (npm run loadtest does).');
  process.exit(1);
}
// Two runs, their start-ups and the fault clean-up, with room to spare.
watchdog((2 * durationSeconds + 120) * 1_000, 'loadtest');

/** One fault schedule entry: on while `active(second)` holds. */
interface FaultWindow {
  label: string;
  upstream: 'status' | 'verify';
  path: string;
  fault: Fault;
  active: (second: number) => boolean;
}

/**
 * Faults for part of the time, switched at whole seconds of the run. The status feed's 503 windows
 * (4 s on, 3 s off) overlap the gateway's first cache refresh (TTL 10 s after the warm-up), so
 * stale-if-error is exercised; the verification service hangs, then answers 503.
 */
const FAULT_WINDOWS: FaultWindow[] = [
  {
    label: 'status feed (all paths) 503, 4 s on / 3 s off',
    upstream: 'status',
    path: '*',
    fault: { kind: 'status', status: 503 },
    active: (s) => s % 7 < 4,
  },
  {
    label: 'verify (all paths) hang, seconds 2-4 of every 8',
    upstream: 'verify',
    path: '*',
    fault: { kind: 'hang' },
    active: (s) => s % 8 >= 2 && s % 8 < 5,
  },
  {
    label: 'verify session/verify/etherscan 503, seconds 10-12 of every 16',
    upstream: 'verify',
    path: '/session/verify/etherscan',
    fault: { kind: 'status', status: 503 },
    active: (s) => s % 16 >= 10 && s % 16 < 13,
  },
];

interface RunReport {
  name: string;
  faults: string[];
  load: LoadSummary;
  upstream: RequestCounts;
  gateway: {
    peakRssMiB: number | null;
    rssSamplesMiB: (number | null)[];
    logs: Record<string, number>;
  };
  faultSwitches?: { second: number; label: string; on: boolean }[];
}

function mix(componentIds: readonly string[]): LoadRequest[] {
  const component = componentIds.map(componentBody);
  return [
    { kind: 'pageTree', body: PAGE_TREE_BODY },
    { kind: 'component', body: component },
    { kind: 'pageTree', body: PAGE_TREE_BODY },
    { kind: 'component', body: component },
    { kind: 'verifyContract', body: VERIFY_BODIES, label: VERIFY_TYPENAME },
  ];
}

/** A fresh gateway, warmed (caches filled, chain list fetched), loaded once, then stopped. */
async function loadRun(
  name: string,
  simulator: SimulatorProcess,
  componentIds: readonly string[],
  windows: FaultWindow[],
): Promise<RunReport> {
  const gateway: GraphqlServer = await startContender(gatewaySpec(simulator));
  let report: RunReport;
  try {
    for (const request of mix(componentIds)) {
      const body = typeof request.body === 'string' ? request.body : (request.body[0] as string);
      const answer = await postGraphql(gateway.url, body);
      if (answer.status !== 200 || answer.json.errors) {
        throw new Error(`warm-up ${request.kind}: ${answer.status} ${answer.body.toString()}`);
      }
    }
    await simulator.resetRequests();
    const rssSamples: (number | null)[] = [mib(gateway.rss())];
    const switches: { second: number; label: string; on: boolean }[] = [];
    const state = new Map<FaultWindow, boolean>();
    const applyFaults = async (second: number) => {
      for (const window of windows) {
        const on = window.active(second);
        if (state.get(window) === on) continue;
        state.set(window, on);
        switches.push({ second, label: window.label, on });
        await simulator.setFault(window.upstream, window.path, on ? window.fault : null);
      }
    };
    await applyFaults(0);
    const load = await runLoad({
      url: gateway.url,
      connections,
      durationSeconds,
      requests: mix(componentIds),
      onTick: async (elapsedMs) => {
        rssSamples.push(mib(gateway.rss()));
        await applyFaults(Math.round(elapsedMs / 1_000));
      },
    });
    if (windows.length > 0) await simulator.clearFaults();
    rssSamples.push(mib(gateway.rss()));
    const upstream = await simulator.requests();
    report = {
      name,
      faults: windows.map((window) => window.label),
      load,
      upstream,
      gateway: { peakRssMiB: mib(gateway.peakRss()), rssSamplesMiB: rssSamples, logs: {} },
      ...(windows.length > 0 ? { faultSwitches: switches } : {}),
    };
  } finally {
    await gateway.stop();
  }
  // Complete once it has exited.
  report.gateway.logs = gateway.logCounts();
  return report;
}

async function main() {
  const simulator = await spawnSimulator('realistic');
  try {
    const feed = await simulator.feed();
    const componentIds = feed.components.map((component) => component.id);
    console.error(
      `simulator: realistic preset, ${componentIds.length} components; ` +
        `${connections} connections, ${durationSeconds} s per run`,
    );

    console.error('healthy run…');
    const healthy = await loadRun('healthy', simulator, componentIds, []);
    console.error('run with faults…');
    await simulator.resetVerification();
    const faulty = await loadRun('faults', simulator, componentIds, FAULT_WINDOWS);

    const report = {
      kind: 'loadtest',
      date: new Date().toISOString(),
      node: process.version,
      cpus: (await import('node:os')).cpus().length,
      preset: 'realistic',
      components: componentIds.length,
      connections,
      durationSeconds,
      mix: 'per connection, in order: pageTree, component(id), pageTree, component(id), verifyContract',
      runs: [healthy, faulty],
    };
    const markdown = render(healthy, faulty);
    console.log(markdown);
    const directory = resolve(ROOT, 'bench/results');
    mkdirSync(directory, { recursive: true });
    const file = resolve(directory, `loadtest-${timestamp()}.json`);
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    console.error(`wrote ${file}`);
    if (healthy.load.errors > 0) {
      console.error(`the healthy run had ${healthy.load.errors} errors`);
      process.exitCode = 1;
    }
  } finally {
    await simulator.stop();
  }
}

function upstreamPaths(counts: RequestCounts): string {
  return formatCounts(counts.byPath);
}

function render(healthy: RunReport, faulty: RunReport): string {
  const headline = (run: RunReport) => [
    run.name,
    run.load.requests,
    run.load.requestsPerSecond,
    run.load.latencyMs.p50,
    run.load.latencyMs.p99,
    run.load.non2xx,
    run.load.graphqlErrorResponses,
    run.load.connectionErrors + run.load.timeouts,
    run.upstream.count,
    upstreamPaths(run.upstream),
    run.gateway.peakRssMiB,
  ];
  const sections = [
    `## Load test: ${connections} connections, ${durationSeconds} s per run, realistic preset\n`,
    markdownTable(
      [
        'run',
        'requests',
        'req/s',
        'p50 ms',
        'p99 ms',
        'non-2xx',
        'GraphQL errors',
        'conn. errors + timeouts',
        'upstream requests',
        'upstream by path',
        'gateway peak RSS MiB',
      ],
      [headline(healthy), headline(faulty)],
    ),
    '\n### What clients saw, by operation\n',
    markdownTable(
      ['run', 'operation', 'answers', 'successful', 'GraphQL errors', 'non-2xx', 'results'],
      [healthy, faulty].flatMap((run) =>
        Object.entries(run.load.byKind).map(([kind, counts]) => [
          run.name,
          kind,
          counts.responses,
          counts.ok,
          counts.graphqlErrors,
          counts.non2xx,
          formatCounts(counts.labels),
        ]),
      ),
    ),
    '\n### Errors by `extensions.code`\n',
    markdownTable(
      ['run', 'errors by code', 'error answers with data', 'status codes', 'RSS samples MiB'],
      [healthy, faulty].map((run) => [
        run.name,
        formatCounts(run.load.errorsByCode),
        run.load.graphqlErrorResponsesWithData,
        formatCounts(run.load.statusCodes),
        run.gateway.rssSamplesMiB.join(' → '),
      ]),
    ),
    '\n### Gateway log lines (warn and above), by message\n',
    markdownTable(
      ['run', 'log lines'],
      [healthy, faulty].map((run) => [run.name, formatCounts(run.gateway.logs)]),
    ),
    `\nFaults: ${faulty.faults.join('; ')}.`,
  ];
  return sections.join('\n');
}

await main();
