/**
 * `npm run bench:instructions`: what a response-cache hit of the tiny query costs the gateway in
 * instructions, against its raw floor's, both counted by callgrind for the same load. Seconds on
 * these machines move by half within an hour, instructions do not: a change to the hit path that
 * `npm run bench` cannot tell from the machine's noise shows here. They are not time, though: the
 * gateway's hit also misses the CPU's caches more than the floor's, which callgrind shows with
 * `--cache` (docs/performance.md, "Counted in instructions").
 *
 * Flags: --warmup N (hits before counting, so that V8 has optimized what a hit runs; default
 * 20000), --seconds S (of load counted; default 10), --connections N (default 10), --cache
 * (simulate the caches too; slower). Needs valgrind (`apt-get install -y valgrind`).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runLoad } from './lib/load.js';
import {
  type ContenderSpec,
  gatewaySpec,
  LOOPBACK,
  runBin,
  spawnContender,
  spawnSimulator,
  startContender,
  waitForHttp,
} from './lib/processes.js';
import { TINY_BODY } from './lib/queries.js';
import { BENCH_CACHE, captureRawFloorFixture, rawFloorSpec } from './lib/raw-floor.js';

const { values } = parseArgs({
  options: {
    warmup: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    cache: { type: 'boolean', default: false },
  },
});
const warmupHits = Number(values.warmup);
const countedSeconds = Number(values.seconds);
const connections = Number(values.connections);

/** callgrind's events (`Ir` always, the rest with `--cache-sim=yes`) and what each is. */
const EVENT_NAMES = {
  Ir: 'instructions',
  Dr: 'data reads',
  Dw: 'data writes',
  I1mr: 'L1 instruction misses',
  D1mr: 'L1 data read misses',
  D1mw: 'L1 data write misses',
  ILmr: 'last-level instruction misses',
  DLmr: 'last-level data read misses',
  DLmw: 'last-level data write misses',
} as const;
type CallgrindEvent = keyof typeof EVENT_NAMES;

/** Sends the tiny query from `connections` connections for `seconds`; returns the hits answered. */
async function hits(url: string, seconds: number): Promise<number> {
  const summary = await runLoad({
    url,
    connections,
    durationSeconds: seconds,
    requests: [{ kind: 'tiny', body: TINY_BODY }],
    // Under valgrind a server answers about 50 times slower.
    timeoutSeconds: 60,
  });
  if (summary.errors > 0) throw new Error(`${summary.errors} failed answers under callgrind`);
  return summary.ok;
}

/** callgrind_control talks to the process through pipes named after `HOST`, which the server has. */
const control = (pid: number, ...args: string[]) => {
  const result = spawnSync('callgrind_control', [...args, String(pid)], {
    env: { ...process.env, HOST: LOOPBACK },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`callgrind_control ${args.join(' ')}: ${result.stderr}`);
};

/** Per hit, each event callgrind counted while `count` ran, for one contender. */
async function countedPerHit(spec: ContenderSpec, directory: string) {
  const out = resolve(directory, spec.name);
  const server = await spawnContender({
    ...spec,
    env: {
      ...spec.env,
      // Hits all the way through, however slowly they come under valgrind.
      STATUS_CACHE_TTL_MS: '3600000',
      STATUS_MAX_STALE_MS: '7200000',
      HTTP_REQUEST_TIMEOUT_MS: '3600000',
      HTTP_HEADERS_TIMEOUT_MS: '3600000',
      HTTP_SOCKET_IDLE_TIMEOUT_MS: '3600000',
    },
    runUnder: [
      'valgrind',
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${out}.%p`,
      ...(values.cache ? ['--cache-sim=yes'] : []),
    ],
  });
  try {
    await waitForHttp(server, spec.readyPath, 300_000);
    // V8 optimizes by calls, not time: a warm-up of a few seconds under valgrind is a few hundred.
    for (let warmed = 0; warmed < warmupHits; ) warmed += await hits(server.url, 5);
    control(server.pid, '--zero');
    control(server.pid, '--instr=on');
    const answered = await hits(server.url, countedSeconds);
    control(server.pid, '--instr=off');
    control(server.pid, '--dump=counted');
    // `<name>.<pid>` is made at start, empty; each dump is `<name>.<pid>.<n>`.
    const dump = readdirSync(directory).find(
      (file) => /^[\w-]+\.\d+\.\d+$/.test(file) && file.startsWith(`${spec.name}.`),
    );
    const text = readFileSync(resolve(directory, dump ?? ''), 'utf8');
    const events = /^events: (.+)$/m.exec(text)?.[1]?.split(' ') ?? [];
    const totals = (/^totals: (.+)$/m.exec(text)?.[1] ?? '').split(' ').map(Number);
    return {
      hits: answered,
      perHit: Object.fromEntries(
        events.map((event, index) => [event, (totals[index] ?? 0) / answered]),
      ) as Partial<Record<CallgrindEvent, number>>,
    };
  } finally {
    await server.stop();
  }
}

async function main() {
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    console.error('valgrind is missing: apt-get install -y valgrind');
    process.exit(1);
  }
  mkdirSync(BENCH_CACHE, { recursive: true });
  runBin('tsc', ['-p', 'bench/tsconfig.contenders.json']);
  const simulator = await spawnSimulator('realistic');
  const directory = mkdtempSync(resolve(tmpdir(), 'bench-instructions-'));
  try {
    const fixture = resolve(BENCH_CACHE, 'raw-floor-instructions.json');
    const capturing = await startContender(gatewaySpec(simulator));
    try {
      await captureRawFloorFixture(capturing, [TINY_BODY], fixture);
    } finally {
      await capturing.stop();
    }
    const gateway = await countedPerHit(gatewaySpec(simulator), directory);
    const floor = await countedPerHit(rawFloorSpec(fixture), directory);
    console.log(
      `\nThe tiny query's hit, per hit (gateway ${gateway.hits} hits, floor ${floor.hits}, ` +
        `${connections} connections, after ${warmupHits} hits of warm-up):\n`,
    );
    console.log('| event | gateway | raw floor | floor ÷ gateway |\n| --- | --- | --- | --- |');
    for (const [event, name] of Object.entries(EVENT_NAMES) as [CallgrindEvent, string][]) {
      const ours = gateway.perHit[event];
      const theirs = floor.perHit[event];
      if (ours === undefined || theirs === undefined) continue;
      console.log(
        `| ${name} | ${Math.round(ours).toLocaleString('en')} | ` +
          `${Math.round(theirs).toLocaleString('en')} | ${(theirs / ours).toFixed(2)} |`,
      );
    }
  } finally {
    await simulator.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
