/**
 * Benchmark of this gateway against a raw floor, a raw pass-through and GraphQL Mesh (Hive Gateway
 * runtime over an OpenAPI description of the status feed), each in its own process on loopback,
 * loaded with autocannon at the same concurrency and duration; the gateway and its raw floor in
 * turns, round after round, each reporting its median round.
 *
 * `npm run bench` (a few minutes) or `npm run bench -- --smoke` (two answers per connection, for CI).
 * Options: --duration <s> (of a load, 10), --rounds <n> (6) and --round-duration <s> (5) of the
 * gateway and raw floor's turns, --connections <n>, --warmup <s>, --pin
 * (see `cpu-pinning.ts`); --only a,b (scenario ids) and
 * --contenders gateway,raw-floor to measure part of it while working (the cold start runs only with
 * every scenario).
 * Writes bench/results/bench-<timestamp>.json and, unless --smoke, bench/results/latest.{json,md}.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { statusPagesFile } from '../test/helpers/status-pages-file.js';
import { pinLoadGenerator } from './lib/cpu-pinning.js';
import {
  type Cell,
  type LoadRequest,
  type LoadSummary,
  loadFaults,
  markdownTable,
  runLoad,
  timestamp,
} from './lib/load.js';
import {
  type ContenderSpec,
  coldStart,
  type GraphqlServer,
  gatewaySpec,
  mib,
  type Preset,
  ROOT,
  runBin,
  type SimulatorProcess,
  spawnSimulator,
  startContender,
  watchdog,
} from './lib/processes.js';
import {
  componentBody,
  entitiesBody,
  MESH_COMPONENTS_BODY,
  MESH_PAGE_TREE_BODY,
  MESH_TINY_BODY,
  PAGE_TREE_BODY,
  TINY_BODY,
} from './lib/queries.js';
import { BENCH_CACHE, CONTENDERS, captureRawFloorFixture, rawFloorSpec } from './lib/raw-floor.js';

const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    'round-duration': { type: 'string' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string' },
    only: { type: 'string' },
    contenders: { type: 'string' },
    pin: { type: 'boolean', default: false },
  },
});
const smoke = values.smoke ?? false;
const durationSeconds = Number(values.duration ?? (smoke ? 1 : 10));
/**
 * The gateway and its raw floor are loaded in turns, this many rounds of `--round-duration` each,
 * the order swapped every round (gateway, floor, floor, gateway, …); each reports its median round,
 * and their ratio is the median of the rounds' ratios, each taken from two loads run back to back.
 * This machine's speed moves by a quarter from one ten seconds to the next: three rounds of 10 s
 * gave the tiny query's ratio anywhere from 0.70 to 0.95 between runs of the same build, while its
 * paired rounds, many and short, agree within a few hundredths (see docs/performance.md).
 */
const rounds = Number(values.rounds ?? (smoke ? 1 : 6));
const roundSeconds = Number(values['round-duration'] ?? (smoke ? 1 : 5));
const warmupSeconds = Number(values.warmup ?? (smoke ? 0 : 2));
const connections = Number(values.connections);
const coldStartRuns = smoke ? 1 : 3;
/**
 * A smoke run's load of each contender: two answers per connection, however long they take. Mesh
 * answers the page tree in about 0.7 s a request: in a second of load on a busy machine it could
 * answer nothing, and the gateway's thousands a second are no more proof that it works.
 */
const SMOKE_ANSWERS_PER_CONNECTION = 2;
const SMOKE_ANSWERS = SMOKE_ANSWERS_PER_CONNECTION * Number(values.connections);
/**
 * A smoke run's wait for a contender to start and for each answer, past autocannon's 10 s and the
 * 20 s of a start: on a loaded machine (run beside the test suite, the smoke's Mesh answered the
 * large preset's page tree in up to 7.8 s at p99). What fails a smoke run is a contender that does
 * not answer, not one that is slow.
 */
const SMOKE_WAIT_SECONDS = 180;
/** How long a process may take to start: a smoke run's wait, else each starter's own. */
const startWait = smoke ? { readyTimeoutMs: SMOKE_WAIT_SECONDS * 1_000 } : {};
/**
 * With `--pin`, autocannon (this process) on one core and each server under load on another, pinned
 * before anything is spawned (the simulator shares the load's core). Off by default: pinned, the
 * server's GC and libuv threads share its one core, which raised the gateway's p99 on the page tree
 * from 5 to 9 ms, while the rounds of one run still moved by a third (see `cpu-pinning.ts`).
 */
const cores = values.pin ? pinLoadGenerator() : undefined;
/** A contender as it is run: on the servers' core when pinning; given its time in a smoke run. */
const onServerCore = (spec: ContenderSpec): ContenderSpec => ({
  ...spec,
  ...(cores ? { core: cores.server } : {}),
  ...startWait,
});
const listOf = (text: string | undefined) =>
  text === undefined ? undefined : new Set(text.split(',').map((item) => item.trim()));
const onlyScenarios = listOf(values.only);
const onlyContenders = listOf(values.contenders);
/** Whether a scenario runs (all by default); the gateway always runs: the others need its answer. */
const wantedScenario = (id: string) => onlyScenarios?.has(id) ?? true;
const wantedContender = (name: ContenderName) =>
  name === 'gateway' || (onlyContenders?.has(name) ?? true);
if (
  !(durationSeconds > 0 && durationSeconds <= 120) ||
  !(roundSeconds > 0 && roundSeconds <= 120) ||
  !(Number.isInteger(rounds) && rounds >= 1 && rounds <= 9) ||
  !(warmupSeconds >= 0 && warmupSeconds <= 30) ||
  !(connections > 0 && connections <= 1000)
) {
  console.error(
    '--duration and --round-duration must be 0-120 s, --rounds 1-9, --warmup 0-30 s, ' +
      '--connections 1-1000',
  );
  process.exit(1);
}
// 16 loads with their warm-ups and start-ups, the cold starts and the composition, with room; a
// smoke run, on whatever CPU it is given, has ten minutes.
watchdog(
  smoke
    ? 600_000
    : (16 * (Math.max(rounds * roundSeconds, durationSeconds) + warmupSeconds + rounds + 6) + 120) *
        1_000,
  'bench',
);

const RESULTS = resolve(ROOT, 'bench/results');
/**
 * Loads that make the run fail, as `(scenario) contender, round n: what`: any contender that
 * answered nothing; any error of the gateway and its raw floor (their answers must be clean); and,
 * in a smoke run (which checks that every contender works), any error of any contender. A full
 * run reports the other contenders' errors as data.
 */
const faults: string[] = [];

const began = performance.now();
const log = (message: string) =>
  console.error(`[bench +${((performance.now() - began) / 1000).toFixed(1)} s] ${message}`);

// ---------------------------------------------------------------------------------------------
// Contenders

type ContenderName = 'gateway' | 'raw-floor' | 'raw-pass-through' | 'mesh';

function passThroughSpec(simulator: SimulatorProcess): ContenderSpec {
  return {
    name: 'raw-pass-through',
    script: resolve(CONTENDERS, 'raw-pass-through.js'),
    env: { UPSTREAM_URL: `${simulator.statusBaseUrl}/summary.json` },
    readyPath: '/health',
  };
}

function meshSpec(supergraph: string): ContenderSpec {
  return {
    name: 'mesh',
    script: resolve(CONTENDERS, 'mesh/server.js'),
    env: { SUPERGRAPH: supergraph, NODE_ENV: 'production' },
    readyPath: '/healthcheck',
  };
}

interface Measurement {
  contender: ContenderName;
  /** Req/s of each round, when measured in turns with another contender (the median is `load`). */
  roundsRequestsPerSecond?: number[];
  /** p99 of each round, in ms, likewise. */
  roundsP99Ms?: number[];
  /** What it was asked, when not the gateway's own operation. */
  note?: string;
  load: LoadSummary;
  upstreamRequests: number;
  upstreamByPath: Record<string, number>;
  upstreamPer1000Ops: number | null;
  peakRssMiB: number | null;
}

/**
 * A fresh process of the contender: `prepare` (captures), a warm-up load, then the measured load
 * with the simulator's request counts reset just before it.
 */
async function measure(
  simulator: SimulatorProcess,
  contender: ContenderName,
  spec: ContenderSpec,
  requests: () => LoadRequest[],
  scenarioId: string,
  started?: GraphqlServer,
): Promise<Measurement> {
  const [measurement] = await measureInTurns(
    simulator,
    [{ contender, spec, requests, ...(started ? { started } : {}) }],
    1,
    durationSeconds,
    scenarioId,
  );
  return measurement as Measurement;
}

interface Turn {
  contender: ContenderName;
  spec: ContenderSpec;
  requests: () => LoadRequest[];
  /** A process of `spec` already running, loaded instead of a fresh one; whoever started it stops it. */
  started?: GraphqlServer;
}

/**
 * A smoke run checks that every contender works; it measures nothing. So the gateway is started once
 * for each preset's scenarios (a to d, then a-large), and Mesh, which keeps nothing between
 * requests, once for every scenario, both at the same time, and each scenario loads those, where a
 * full run starts fresh ones for every scenario, one after another. A smoke run started 5 gateways
 * and 4 Meshes one after another for them; now 2 and 1.
 */
const kept = new Map<ContenderName, Promise<GraphqlServer>>();
function keptContender(contender: ContenderName, spec: ContenderSpec): Promise<GraphqlServer> {
  let server = kept.get(contender);
  if (!server) {
    server = startContender(onServerCore(spec));
    kept.set(contender, server);
  }
  return server;
}
async function stopKept(contender?: ContenderName) {
  const stopping = contender ? [contender] : [...kept.keys()];
  for (const name of stopping) {
    const server = await kept.get(name)?.catch(() => undefined);
    kept.delete(name);
    await server?.stop();
  }
}

/**
 * Fresh processes of the contenders, each warmed up, then loaded in turns for `roundCount` rounds
 * of `seconds`, the order reversed every other round (A B, B A, A B, …) so that neither always
 * follows the other; each contender's result is its median round by req/s, its upstream requests
 * those of all its rounds. Every process it started is stopped at the end.
 */
async function measureInTurns(
  simulator: SimulatorProcess,
  turns: readonly Turn[],
  roundCount: number,
  seconds: number,
  scenarioId: string,
): Promise<Measurement[]> {
  const servers: GraphqlServer[] = [];
  const fresh: GraphqlServer[] = [];
  try {
    for (const turn of turns) {
      if (turn.started) {
        servers.push(turn.started);
        continue;
      }
      const server = await startContender(onServerCore(turn.spec));
      fresh.push(server);
      servers.push(server);
    }
    if (warmupSeconds > 0) {
      for (const [index, turn] of turns.entries()) {
        await runLoad({
          url: (servers[index] as GraphqlServer).url,
          connections,
          durationSeconds: warmupSeconds,
          requests: turn.requests(),
        });
      }
    }
    const loads: LoadSummary[][] = turns.map(() => []);
    const upstream = turns.map(() => ({ count: 0, byPath: {} as Record<string, number> }));
    for (let round = 0; round < roundCount; round += 1) {
      const order = [...turns.keys()];
      if (round % 2 === 1) order.reverse();
      for (const index of order) {
        const turn = turns[index] as Turn;
        await simulator.resetRequests();
        const load = await runLoad({
          url: (servers[index] as GraphqlServer).url,
          connections,
          durationSeconds: seconds,
          ...(smoke ? { answers: SMOKE_ANSWERS, timeoutSeconds: SMOKE_WAIT_SECONDS } : {}),
          requests: turn.requests(),
        });
        const asked = await simulator.requests();
        const total = upstream[index] as { count: number; byPath: Record<string, number> };
        total.count += asked.count;
        for (const [path, count] of Object.entries(asked.byPath)) {
          total.byPath[path] = (total.byPath[path] ?? 0) + count;
        }
        (loads[index] as LoadSummary[]).push(load);
        // Every round, not only the median one reported: a round that failed fails the run.
        const errorsAreData =
          !smoke && turn.contender !== 'gateway' && turn.contender !== 'raw-floor';
        for (const fault of loadFaults(load, { errorsAreData })) {
          faults.push(`(${scenarioId}) ${turn.contender}, round ${round + 1}: ${fault}`);
        }
      }
    }
    return turns.map((turn, index) => {
      const rounds_ = loads[index] as LoadSummary[];
      const load = medianRound(rounds_);
      const requests = rounds_.reduce((sum, round) => sum + round.requests, 0);
      const { count, byPath } = upstream[index] as {
        count: number;
        byPath: Record<string, number>;
      };
      log(
        `  ${turn.contender}: ${load.requestsPerSecond} req/s, p50 ${load.latencyMs.p50} ms, ` +
          `p99 ${load.latencyMs.p99} ms, ${load.errors} errors` +
          (rounds_.length > 1
            ? ` (median of ${rounds_.map((round) => round.requestsPerSecond).join(', ')})`
            : ''),
      );
      return {
        contender: turn.contender,
        load,
        ...(rounds_.length > 1
          ? {
              roundsRequestsPerSecond: rounds_.map((round) => round.requestsPerSecond),
              roundsP99Ms: rounds_.map((round) => round.latencyMs.p99),
            }
          : {}),
        upstreamRequests: count,
        upstreamByPath: byPath,
        upstreamPer1000Ops: requests > 0 ? Math.round((count / requests) * 1000 * 10) / 10 : null,
        peakRssMiB: mib((servers[index] as GraphqlServer).peakRss()),
      };
    });
  } finally {
    for (const server of fresh) await server.stop();
  }
}

/** The round with the median req/s (the lower middle one of an even count). */
function medianRound(loads: readonly LoadSummary[]): LoadSummary {
  const sorted = [...loads].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return sorted[Math.floor((sorted.length - 1) / 2)] as LoadSummary;
}

// ---------------------------------------------------------------------------------------------
// Scenarios

interface Scenario {
  id: string;
  title: string;
  preset: Preset;
  /** What the gateway (and the raw floor, with the gateway's bytes) is asked. */
  gateway: () => LoadRequest[];
  /** Every distinct body the gateway is sent, captured for the raw floor. */
  captureBodies: string[];
  passThrough: boolean;
  /** What Mesh is asked, or why it is not. */
  mesh: { requests: () => LoadRequest[]; note?: string } | { skip: string };
}

interface ScenarioResult {
  id: string;
  title: string;
  preset: Preset;
  /** Bytes of the gateway's answer (the first captured one). */
  gatewayAnswerBytes: number;
  measurements: Measurement[];
  meshSkipped?: string;
  ratios: Ratios;
}

interface Ratios {
  /** gateway ÷ raw floor: req/s (below 1: slower), p50, p99 (above 1: slower). */
  gatewayVsRawFloor: RatioSet | null;
  gatewayVsMesh: RatioSet | null;
}

interface RatioSet {
  /**
   * Of two contenders loaded in turns, the median of their rounds' ratios (`perRound`); else the
   * ratio of their loads.
   */
  requestsPerSecond: number | null;
  /** Each round's req/s ratio, the two loads run back to back, when loaded in turns. */
  perRound?: (number | null)[];
  /** The ratio of their median rounds, when loaded in turns (the rows of the scenario's table). */
  ofMedianRounds?: number | null;
  p50: number | null;
  p99: number | null;
}

const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 100) / 100 : null);

function ratios(measurements: Measurement[]): Ratios {
  const find = (name: ContenderName) => measurements.find((m) => m.contender === name);
  const gateway = find('gateway');
  const against = (other: Measurement | undefined): RatioSet | null => {
    if (!(gateway && other)) return null;
    const latency = {
      p50: ratio(gateway.load.latencyMs.p50, other.load.latencyMs.p50),
      p99: ratio(gateway.load.latencyMs.p99, other.load.latencyMs.p99),
    };
    const loads = ratio(gateway.load.requestsPerSecond, other.load.requestsPerSecond);
    const ours = gateway.roundsRequestsPerSecond;
    const theirs = other.roundsRequestsPerSecond;
    if (!(ours && theirs && ours.length === theirs.length)) {
      return { requestsPerSecond: loads, ...latency };
    }
    const perRound = ours.map((value, round) => ratio(value, theirs[round] as number));
    const known = perRound.filter((value) => value !== null);
    return {
      requestsPerSecond: known.length > 0 ? Math.round(median(known) * 100) / 100 : null,
      perRound,
      ofMedianRounds: loads,
      ...latency,
    };
  };
  return { gatewayVsRawFloor: against(find('raw-floor')), gatewayVsMesh: against(find('mesh')) };
}

async function runScenario(
  simulator: SimulatorProcess,
  supergraph: string,
  scenario: Scenario,
): Promise<ScenarioResult> {
  log(`scenario ${scenario.id} (${scenario.preset}): ${scenario.title}`);
  const measurements: Measurement[] = [];

  // The gateway's answers are captured first, so that the raw floor sends the same bytes.
  const fixture = resolve(BENCH_CACHE, `raw-floor-${scenario.id}.json`);
  if (smoke && !('skip' in scenario.mesh) && wantedContender('mesh')) {
    // Started beside the gateway, not after its loads.
    void keptContender('mesh', meshSpec(supergraph)).catch(() => undefined);
  }
  const capturing = smoke
    ? await keptContender('gateway', gatewaySpec(simulator))
    : await startContender(onServerCore(gatewaySpec(simulator)));
  let gatewayAnswerBytes: number;
  try {
    gatewayAnswerBytes = await captureRawFloorFixture(capturing, scenario.captureBodies, fixture);
  } catch (error) {
    if (!smoke) await capturing.stop();
    throw error;
  }
  // A full run loads a gateway that has answered nothing yet; a smoke run, which checks that
  // everything works, loads the one that captured (one process start less per scenario).
  if (!smoke) await capturing.stop();
  measurements.push(
    ...(await measureInTurns(
      simulator,
      [
        {
          contender: 'gateway',
          spec: gatewaySpec(simulator),
          requests: scenario.gateway,
          ...(smoke ? { started: capturing } : {}),
        },
        ...(wantedContender('raw-floor')
          ? [
              {
                contender: 'raw-floor' as const,
                spec: rawFloorSpec(fixture),
                requests: scenario.gateway,
              },
            ]
          : []),
      ],
      rounds,
      roundSeconds,
      scenario.id,
    )),
  );

  if (scenario.passThrough && wantedContender('raw-pass-through')) {
    const passThrough = await measure(
      simulator,
      'raw-pass-through',
      passThroughSpec(simulator),
      () => [{ kind: 'summary.json', body: '{}' }],
      scenario.id,
    );
    passThrough.note = 'returns summary.json as fetched, per request';
    measurements.push(passThrough);
  }

  let meshSkipped: string | undefined;
  if ('skip' in scenario.mesh) {
    meshSkipped = scenario.mesh.skip;
  } else if (wantedContender('mesh')) {
    const mesh = await measure(
      simulator,
      'mesh',
      meshSpec(supergraph),
      scenario.mesh.requests,
      scenario.id,
      smoke ? await keptContender('mesh', meshSpec(supergraph)) : undefined,
    );
    if (scenario.mesh.note) mesh.note = scenario.mesh.note;
    measurements.push(mesh);
  }

  return {
    id: scenario.id,
    title: scenario.title,
    preset: scenario.preset,
    gatewayAnswerBytes,
    measurements,
    ...(meshSkipped ? { meshSkipped } : {}),
    ratios: ratios(measurements),
  };
}

/** What the cached path must do (issue 14): the hit path at wire speed, on the status queries. */
const TARGETS = {
  /** Gateway ÷ raw floor, req/s, at least. */
  floorRatio: 0.8,
  /** Gateway p99 in ms, at most. */
  p99Ms: 5,
  /** The scenarios they hold for: the page tree and the tiny banner query. */
  scenarios: ['a', 'b'],
} as const;

interface Target {
  scenario: string;
  measure: string;
  value: number | null;
  bound: string;
  met: boolean;
}

function targets(scenarios: ScenarioResult[]): Target[] {
  return scenarios
    .filter(({ id }) => (TARGETS.scenarios as readonly string[]).includes(id))
    .flatMap((scenario) => {
      const ratio = scenario.ratios.gatewayVsRawFloor?.requestsPerSecond ?? null;
      const gateway = scenario.measurements.find((m) => m.contender === 'gateway');
      // Loaded in rounds, the median of the rounds' p99: one slow round of the machine is not it.
      const p99 = gateway
        ? gateway.roundsP99Ms
          ? median(gateway.roundsP99Ms)
          : gateway.load.latencyMs.p99
        : null;
      return [
        {
          scenario: `(${scenario.id}) ${scenario.title}`,
          measure:
            rounds > 1
              ? `gateway ÷ raw floor, req/s (median of ${rounds} rounds' ratios)`
              : 'gateway ÷ raw floor, req/s',
          value: ratio,
          bound: `≥ ${TARGETS.floorRatio}`,
          met: ratio !== null && ratio >= TARGETS.floorRatio,
        },
        {
          scenario: `(${scenario.id}) ${scenario.title}`,
          measure:
            rounds > 1
              ? `gateway p99 ms at ${connections} connections (median of ${rounds} rounds)`
              : `gateway p99 ms at ${connections} connections`,
          value: p99,
          bound: `≤ ${TARGETS.p99Ms}`,
          met: p99 !== null && p99 <= TARGETS.p99Ms,
        },
      ];
    });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function coldStarts(simulator: SimulatorProcess, supergraph: string) {
  log(`scenario e: cold start, median of ${coldStartRuns}`);
  const gateway: number[] = [];
  const mesh: number[] = [];
  for (let i = 0; i < coldStartRuns; i += 1) {
    gateway.push(await coldStart(onServerCore(gatewaySpec(simulator)), PAGE_TREE_BODY));
    mesh.push(await coldStart(onServerCore(meshSpec(supergraph)), MESH_PAGE_TREE_BODY));
  }
  const round = (ms: number) => Math.round(ms);
  return {
    gateway: { medianMs: round(median(gateway)), runsMs: gateway.map(round) },
    mesh: { medianMs: round(median(mesh)), runsMs: mesh.map(round) },
  };
}

/** Pages an executed overview reads, and the larger configurations it is compared across. */
const OVERVIEW_PAGES = 50;
const OVERVIEW_CONFIGURED = smoke ? ([50, 10_000] as const) : ([50, 1_000, 10_000] as const);

/**
 * Scenario f: what one executed `statusOverview` of 50 pages costs (its answer built anew, past the
 * response cache), with 50, 1,000 and 10,000 pages configured. The 50 it reads are the simulator's
 * one feed under 50 slugs, held fresh for the whole run: what is measured is the gateway's own work,
 * which must not grow with the pages it does not read. One request at a time, the median of each.
 */
async function overviewCost(simulator: SimulatorProcess) {
  const requests = smoke ? 10 : 300;
  /** Overviews answered in a row before the timed ones: every page is fetched and held by then. */
  const warm = smoke ? 3 : 20;
  log(`scenario f: executed overview of ${OVERVIEW_PAGES} pages, ${requests} one at a time`);
  const slugs = Array.from({ length: OVERVIEW_CONFIGURED.at(-1) ?? 0 }, (_, i) => `p${i}`);
  const read = slugs.slice(0, OVERVIEW_PAGES);
  const rows: { configured: number; medianMs: number; ratio: number }[] = [];
  const start = (configured: number) => {
    const file = statusPagesFile(
      slugs.slice(0, configured).map((slug) => ({ slug, baseUrl: simulator.statusBaseUrl })),
    );
    const { STATUS_BASE_URL: _one, ...env } = gatewaySpec(simulator).env;
    return startContender(
      onServerCore({
        ...gatewaySpec(simulator),
        env: {
          ...env,
          STATUS_PAGES_FILE: file,
          STATUS_CACHE_TTL_MS: '600000',
          LOG_LEVEL: 'warn',
        },
      }),
    );
  };
  // A full run starts each gateway once the one before is stopped, so that none shares the
  // machine with another; a smoke run starts them all at once (it times nothing it reports on).
  const starting = smoke
    ? OVERVIEW_CONFIGURED.map((configured) => {
        const server = start(configured);
        server.catch(() => undefined);
        return server;
      })
    : undefined;
  try {
    for (const [index, configured] of OVERVIEW_CONFIGURED.entries()) {
      const gateway = await (starting?.[index] ?? start(configured));
      try {
        const overview = async (n: number) => {
          const started = performance.now();
          const response = await fetch(gateway.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            // A comment of its own: the response cache keeps each answer under its body.
            body: JSON.stringify({
              query: `query ($s: [String!]) { statusOverview(slugs: $s) { complete indicator degradedComponents { id status page { slug } } } } # ${n}`,
              variables: { s: read },
            }),
          });
          const body = (await response.json()) as { errors?: unknown };
          if (body.errors) throw new Error(`overview failed: ${JSON.stringify(body.errors)}`);
          return performance.now() - started;
        };
        // Until every page is fetched and held: the first reads wait on the host's request slots.
        for (let n = 1, done = 0; done < warm; n += 1) {
          done = await overview(-n).then(
            () => done + 1,
            (error: unknown) => {
              if (n > 200) throw error;
              return 0;
            },
          );
        }
        const times: number[] = [];
        for (let n = 0; n < requests; n += 1) times.push(await overview(n));
        const medianMs = median(times);
        log(`  ${configured} pages configured: ${Math.round(medianMs * 100) / 100} ms`);
        rows.push({
          configured,
          medianMs: Math.round(medianMs * 100) / 100,
          ratio: Math.round((medianMs / (rows[0]?.medianMs ?? medianMs)) * 100) / 100,
        });
      } finally {
        await gateway.stop();
      }
    }
  } finally {
    // Those a failed configuration left started.
    for (const server of await Promise.allSettled(starting ?? [])) {
      if (server.status === 'fulfilled') await server.value.stop();
    }
  }
  return { pages: OVERVIEW_PAGES, requests, rows };
}

// ---------------------------------------------------------------------------------------------

function render(
  scenarios: ScenarioResult[],
  cold: Awaited<ReturnType<typeof coldStarts>> | undefined,
  meshComposeMs: number,
  overview: Awaited<ReturnType<typeof overviewCost>> | undefined,
): string {
  const out: string[] = [
    `# Benchmark${smoke ? ' (smoke)' : ''}: ${connections} connections, ` +
      (smoke
        ? `${SMOKE_ANSWERS_PER_CONNECTION} answers per connection per contender`
        : `${durationSeconds} s per contender (after ${warmupSeconds} s warm-up)`) +
      `, Node ${process.version}, ${cpus().length} CPUs`,
    '',
    'Every contender and the simulator run in their own processes on loopback, on the same ' +
      'machine as autocannon' +
      (cores
        ? `, each contender pinned to CPU ${cores.server} and autocannon and the simulator to CPU ${cores.load} (taskset).`
        : ', each process on whichever core the scheduler gives it.') +
      ' Upstream requests are counted by the simulator during the measured ' +
      'load only.' +
      (rounds > 1
        ? ` The gateway and the raw floor are loaded in turns, ${rounds} rounds of ${roundSeconds} s ` +
          'each (the gateway first in one round, the floor in the next), and each row is its ' +
          "median round (every round in the last column), so that the machine's drift falls on " +
          'both alike.'
        : ''),
  ];
  for (const scenario of scenarios) {
    out.push('', `## (${scenario.id}) ${scenario.title}, ${scenario.preset} preset`, '');
    const rows: Cell[][] = scenario.measurements.map((m) => [
      m.contender,
      m.load.requestsPerSecond,
      m.load.latencyMs.p50,
      m.load.latencyMs.p99,
      m.load.errors,
      m.upstreamPer1000Ops,
      m.peakRssMiB,
      [
        m.note,
        m.roundsRequestsPerSecond && `rounds: ${m.roundsRequestsPerSecond.join(', ')} req/s`,
        m.roundsP99Ms && `p99 ${m.roundsP99Ms.join(', ')} ms`,
      ]
        .filter(Boolean)
        .join('; '),
    ]);
    if (scenario.meshSkipped)
      rows.push(['mesh', null, null, null, null, null, null, scenario.meshSkipped]);
    out.push(
      markdownTable(
        [
          'contender',
          'req/s',
          'p50 ms',
          'p99 ms',
          'errors',
          'upstream req / 1k ops',
          'peak RSS MiB',
          'note',
        ],
        rows,
      ),
      '',
      `Gateway answer: ${scenario.gatewayAnswerBytes.toLocaleString('en-US')} bytes.`,
    );
  }
  const goals = targets(scenarios);
  if (goals.length > 0) {
    out.push(
      '',
      '## Targets: the cached path at wire speed',
      '',
      markdownTable(
        ['scenario', 'measure', 'value', 'target', 'met'],
        goals.map((goal) => [
          goal.scenario,
          goal.measure,
          goal.value,
          goal.bound,
          goal.met ? 'yes' : 'NO',
        ]),
      ),
    );
  }
  out.push('', '## Ratios (same run)', '');
  const set = (r: RatioSet | null): Cell[] =>
    r ? [r.requestsPerSecond, r.p50, r.p99] : [null, null, null];
  out.push(
    markdownTable(
      [
        'scenario',
        'gateway/raw-floor req/s',
        'p50',
        'p99',
        'req/s by round',
        'gateway/Mesh req/s',
        'p50',
        'p99',
      ],
      scenarios.map((s) => {
        const floor = s.ratios.gatewayVsRawFloor;
        return [
          `(${s.id}) ${s.preset}`,
          ...set(floor),
          floor?.perRound
            ? `${floor.perRound.join(', ')} (median rounds: ${floor.ofMedianRounds})`
            : null,
          ...set(s.ratios.gatewayVsMesh),
        ];
      }),
    ),
    '',
    'req/s ratio below 1: the gateway serves fewer; latency ratio above 1: the gateway is slower; ' +
      "n/a where the other contender's latency is under autocannon's 1 ms resolution. Loaded in " +
      "turns, the gateway's req/s ratio to the raw floor is the median of its rounds' ratios.",
  );
  if (cold) {
    out.push(
      '',
      `## (e) Cold start: process start to first answered page-tree query, median of ${coldStartRuns}`,
      '',
      markdownTable(
        ['contender', 'median ms', 'runs ms'],
        [
          ['gateway', cold.gateway.medianMs, cold.gateway.runsMs.join(', ')],
          ['mesh', cold.mesh.medianMs, cold.mesh.runsMs.join(', ')],
        ],
      ),
    );
  }
  out.push(
    '',
    `Mesh composition (mesh-compose, a build step, not in the cold start): ${Math.round(meshComposeMs)} ms.`,
  );
  if (overview) {
    out.push(
      '',
      `## (f) Executed overview of ${overview.pages} pages, by pages configured (median of ${overview.requests}, one at a time)`,
      '',
      markdownTable(
        ['configured', 'median ms', 'ratio to the first'],
        overview.rows.map((row) => [row.configured, row.medianMs, row.ratio]),
      ),
    );
  }
  return out.join('\n');
}

async function main() {
  if (!existsSync(resolve(ROOT, 'dist/main.js'))) {
    throw new Error('dist/main.js is missing: run `npm run build` first (npm run bench does).');
  }
  mkdirSync(BENCH_CACHE, { recursive: true });
  log('compiling the contenders');
  runBin('tsc', ['-p', 'bench/tsconfig.contenders.json']);

  const simulator = await spawnSimulator('realistic', startWait);
  try {
    const supergraph = resolve(BENCH_CACHE, 'mesh-supergraph.graphql');
    log('composing the Mesh supergraph');
    const meshComposeMs = runBin(
      'mesh-compose',
      ['-c', 'bench/contenders/mesh/mesh.config.ts', '-o', supergraph],
      { STATUS_BASE_URL: simulator.statusBaseUrl },
    );

    const realistic = await simulator.feed();
    const ids = realistic.components.map((component) => component.id);
    const componentBodies = ids.map(componentBody);
    const scenarios: Scenario[] = [
      {
        id: 'a',
        title: 'page-tree query',
        preset: 'realistic',
        gateway: () => [{ kind: 'pageTree', body: PAGE_TREE_BODY }],
        captureBodies: [PAGE_TREE_BODY],
        passThrough: true,
        mesh: {
          requests: () => [{ kind: 'pageTree', body: MESH_PAGE_TREE_BODY }],
          note: 'flat equivalent: summary + upcoming',
        },
      },
      {
        id: 'b',
        title: 'tiny query `{ statusPage { status { indicator } } }`',
        preset: 'realistic',
        gateway: () => [{ kind: 'tiny', body: TINY_BODY }],
        captureBodies: [TINY_BODY],
        passThrough: false,
        mesh: {
          requests: () => [{ kind: 'tiny', body: MESH_TINY_BODY }],
          note: '`{ summary { status { indicator } } }`',
        },
      },
      {
        id: 'c',
        title: `component(id:) over ${ids.length} ids`,
        preset: 'realistic',
        gateway: () => [{ kind: 'component', body: componentBodies }],
        captureBodies: componentBodies,
        passThrough: false,
        mesh: {
          requests: () => [{ kind: 'components', body: MESH_COMPONENTS_BODY }],
          note: 'no lookup by id: every component of the summary, for the client to filter',
        },
      },
      {
        id: 'd',
        title: '`_entities` with 100 Component representations',
        preset: 'realistic',
        gateway: () => [{ kind: 'entities', body: entitiesBody(ids, 100) }],
        captureBodies: [entitiesBody(ids, 100)],
        passThrough: false,
        mesh: { skip: 'n/a: not a federation subgraph of this schema' },
      },
    ];

    const results: ScenarioResult[] = [];
    let large: Awaited<ReturnType<typeof simulator.setPreset>> | undefined;
    let cold: Awaited<ReturnType<typeof coldStarts>> | undefined;
    try {
      for (const scenario of scenarios.filter(({ id }) => wantedScenario(id)))
        results.push(await runScenario(simulator, supergraph, scenario));
      // The large preset's scenario needs a gateway that has held nothing of the realistic one.
      await stopKept('gateway');
      cold = onlyScenarios || onlyContenders ? undefined : await coldStarts(simulator, supergraph);

      large = wantedScenario('a-large') ? await simulator.setPreset('large') : undefined;
      if (large) {
        log('switched the simulator to the large preset');
        const firstScenario = scenarios[0] as Scenario;
        results.push(
          await runScenario(simulator, supergraph, {
            ...firstScenario,
            id: 'a-large',
            preset: 'large',
          }),
        );
      }
    } finally {
      await stopKept();
    }

    const overview = wantedScenario('f') ? await overviewCost(simulator) : undefined;
    const markdown = render(results, cold, meshComposeMs, overview);
    console.log(markdown);
    const report = {
      kind: 'bench',
      smoke,
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      pinnedCores: cores ?? null,
      connections,
      durationSeconds,
      rounds,
      roundSeconds,
      warmupSeconds,
      components: { realistic: ids.length, large: large?.components.length ?? null },
      meshComposeMs: Math.round(meshComposeMs),
      coldStart: cold,
      overviewCost: overview ?? null,
      targets: targets(results),
      scenarios: results,
    };
    mkdirSync(RESULTS, { recursive: true });
    const json = `${JSON.stringify(report, null, 2)}\n`;
    const file = resolve(RESULTS, `bench-${smoke ? 'smoke-' : ''}${timestamp()}.json`);
    writeFileSync(file, json);
    if (!smoke && !onlyScenarios && !onlyContenders) {
      writeFileSync(resolve(RESULTS, 'latest.json'), json);
      writeFileSync(resolve(RESULTS, 'latest.md'), `${markdown}\n`);
    }
    log(
      `wrote ${file}${smoke || onlyScenarios || onlyContenders ? '' : ' and bench/results/latest.{json,md}'}`,
    );

    if (faults.length > 0) {
      console.error(`loads whose figures are wrong to report:\n  ${faults.join('\n  ')}`);
      process.exitCode = 1;
    }
  } finally {
    await simulator.stop();
  }
}

await main();
