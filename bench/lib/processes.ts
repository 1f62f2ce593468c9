/**
 * Child processes for the load tests and benchmarks: the simulator, this gateway and the other
 * contenders, each in its own process on loopback, with readiness polling, log capture, peak RSS
 * (`VmHWM`) and a bounded shutdown. Every child is killed if the harness exits.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GRAPHQL_HEADERS } from './load.js';

export const LOOPBACK = '127.0.0.1';
/** The project root (where package.json is). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const living = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of living) child.kill('SIGKILL');
});
// Without these, Ctrl-C would end the harness without the exit hook and leave children behind.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => process.exit(130));
}

/** A free TCP port on loopback (released before returning: the child binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Reads a `kB` field of /proc/<pid>/status, in bytes; null when the process is gone. */
export function procStatusBytes(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): number | null {
  if (pid === undefined) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match?.[1] ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly port: number;
  /** When it was spawned (performance.now()). */
  readonly spawnedAt: number;
  /** Peak resident set size so far (`VmHWM`), in bytes. */
  peakRss(): number | null;
  /** Current resident set size (`VmRSS`), in bytes. */
  rss(): number | null;
  /** The last lines it wrote (stdout and stderr), for diagnostics. */
  tail(): string[];
  /** Pino-style JSON log lines counted by `level msg`. */
  logCounts(): Record<string, number>;
  /** Resolves with the exit code (or signal) once it has exited. */
  readonly exited: Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  /** Script to run with `node`, relative to `cwd` or absolute. */
  script: string;
  /** The directory it runs in. Default: the project root. */
  cwd?: string;
  args?: string[];
  /** Flags for node itself, before the script. */
  nodeFlags?: readonly string[];
  port: number;
  env: Record<string, string>;
  /** The one core the process runs on (`taskset -c`); any core when undefined. */
  core?: number | undefined;
  /** A command node runs under (`['valgrind', '--tool=callgrind', …]`), after `taskset` if any. */
  runUnder?: readonly string[];
  /**
   * Told of every line the process writes (stdout and stderr), for tests that read its log. Without
   * it the output goes to a file, not through this process: a gateway under load writes an access
   * line per request, and reading tens of thousands of lines a second in the load generator's own
   * process would slow the load generator down for the contenders that log, and only for them.
   */
  onLine?: (line: string) => void;
}

const TAIL_LINES = 40;
const PINO_LEVELS: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** Runs a project binary from node_modules/.bin, failing with its output. */
export function runBin(bin: string, args: string[], env: Record<string, string> = {}): number {
  const started = performance.now();
  const result = spawnSync(resolve(ROOT, 'node_modules/.bin', bin), args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (result.status !== 0) {
    throw new Error(`${bin} ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  }
  return performance.now() - started;
}

/** Starts `node <script>` with a clean, explicit environment (plus PATH and HOME). */
export function spawnNode(options: SpawnOptions): ManagedProcess {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    ...options.env,
  };
  const spawnedAt = performance.now();
  const argv = [
    ...(options.nodeFlags ?? []),
    resolve(options.cwd ?? ROOT, options.script),
    ...(options.args ?? []),
  ];
  // The output goes through a pipe only when someone reads it as it comes.
  const outputDirectory = options.onLine ? undefined : mkdtempSync(resolve(tmpdir(), 'bench-'));
  const outputFile = outputDirectory && resolve(outputDirectory, 'output.log');
  const outputFd = outputFile === undefined ? undefined : openSync(outputFile, 'w');
  // taskset and valgrind exec node in their own process: the pid, signals and exit are node's.
  const command = [
    ...(options.core === undefined ? [] : ['taskset', '-c', String(options.core)]),
    ...(options.runUnder ?? []),
    process.execPath,
    ...argv,
  ];
  const child = spawn(command[0] as string, command.slice(1), {
    cwd: options.cwd ?? ROOT,
    env,
    stdio: ['ignore', outputFd ?? 'pipe', outputFd ?? 'pipe'],
  });
  if (outputFd !== undefined) closeSync(outputFd);
  living.add(child);
  const lines: string[] = [];
  const counts: Record<string, number> = {};
  const record = (text: string) => {
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      options.onLine?.(line);
      lines.push(line);
      if (lines.length > TAIL_LINES) lines.shift();
      // The request log writes an info line per request: only warn and above are counted.
      if (line.startsWith('{"level":') && Number(line.slice(9, 11)) < 40) continue;
      if (line.startsWith('{')) {
        try {
          const entry = JSON.parse(line) as { level?: number | string; msg?: string };
          const level =
            typeof entry.level === 'number'
              ? (PINO_LEVELS[entry.level] ?? entry.level)
              : entry.level;
          const key = `${level ?? '?'} ${entry.msg ?? ''}`.trim();
          counts[key] = (counts[key] ?? 0) + 1;
        } catch {
          // Not JSON after all: kept in the tail only.
        }
      }
    }
  };
  /**
   * With the output in a file: reads what was written since the last look, when asked (a tail on
   * failure, the counts at the end), in chunks, so that a long run's log never sits in memory.
   */
  let readUpTo = 0;
  const catchUp = () => {
    if (outputFile === undefined) return;
    let fd: number;
    try {
      fd = openSync(outputFile, 'r');
    } catch {
      return;
    }
    try {
      const chunk = Buffer.alloc(1 << 22);
      let partial = '';
      for (;;) {
        const read = readSync(fd, chunk, 0, chunk.length, readUpTo);
        if (read === 0) break;
        readUpTo += read;
        const text = partial + chunk.toString('utf8', 0, read);
        const end = text.lastIndexOf('\n') + 1;
        partial = text.slice(end);
        record(text.slice(0, end));
      }
      // An unfinished last line is read again next time.
      readUpTo -= Buffer.byteLength(partial);
    } finally {
      closeSync(fd);
    }
  };
  // A chunk may end within a line: the rest of it comes with the next chunk of the same stream.
  const reader = () => {
    let partial = '';
    return (chunk: Buffer) => {
      const text = partial + chunk.toString('utf8');
      const end = text.lastIndexOf('\n') + 1;
      partial = text.slice(end);
      record(text.slice(0, end));
    };
  };
  child.stdout?.on('data', reader());
  child.stderr?.on('data', reader());
  const exited = new Promise<string>((done) => {
    child.on('exit', (code, signal) => {
      living.delete(child);
      catchUp();
      if (outputDirectory) rmSync(outputDirectory, { recursive: true, force: true });
      done(signal ?? String(code));
    });
  });
  let lastPeak: number | null = null;
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${options.name}: could not spawn ${options.script}`);
  return {
    name: options.name,
    pid,
    port: options.port,
    origin: `http://${LOOPBACK}:${options.port}`,
    spawnedAt,
    peakRss: () => {
      lastPeak = procStatusBytes(pid, 'VmHWM') ?? lastPeak;
      return lastPeak;
    },
    rss: () => procStatusBytes(pid, 'VmRSS'),
    tail: () => {
      catchUp();
      return [...lines];
    },
    logCounts: () => {
      catchUp();
      return { ...counts };
    },
    exited,
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      lastPeak = procStatusBytes(pid, 'VmHWM') ?? lastPeak;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Polls `check` every `intervalMs` until it resolves true; fails after `timeoutMs` or when the
 * process exits first, with its last output.
 */
export async function waitUntil(
  process_: ManagedProcess,
  check: () => Promise<boolean>,
  { timeoutMs = 20_000, intervalMs = 25 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let exit: string | undefined;
  void process_.exited.then((code) => {
    exit = code;
  });
  while (performance.now() < deadline) {
    if (exit !== undefined) {
      throw new Error(`${process_.name} exited (${exit}):\n${process_.tail().join('\n')}`);
    }
    try {
      if (await check()) return;
    } catch {
      // Not listening yet.
    }
    await sleep(intervalMs);
  }
  await process_.stop(1_000);
  throw new Error(
    `${process_.name} not ready within ${timeoutMs} ms:\n${process_.tail().join('\n')}`,
  );
}

/** GETs `path` until it answers 2xx. */
export function waitForHttp(process_: ManagedProcess, path: string, timeoutMs?: number) {
  return waitUntil(
    process_,
    async () => {
      const response = await fetch(`${process_.origin}${path}`, {
        signal: AbortSignal.timeout(2_000),
      });
      await response.arrayBuffer();
      return response.ok;
    },
    timeoutMs === undefined ? {} : { timeoutMs },
  );
}

// ---------------------------------------------------------------------------------------------
// The simulator and its control API

export type Preset = 'demo' | 'realistic' | 'large';

export interface FeedOverview {
  page: { id: string; name: string };
  status: { indicator: string; description: string };
  components: { id: string; name: string; status: string; group: boolean }[];
  incidents: number;
  scheduledMaintenances: number;
  upcomingMaintenances: number;
}

export interface RequestCounts {
  count: number;
  byPath: Record<string, number>;
}

export type Fault =
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  | { kind: 'delay'; ms: number }
  | { kind: 'html' | 'truncated' | 'empty' | 'reset' | 'hang' };

export interface SimulatorProcess extends ManagedProcess {
  readonly statusBaseUrl: string;
  readonly verifyBaseUrl: string;
  requests(): Promise<RequestCounts>;
  resetRequests(): Promise<void>;
  feed(): Promise<FeedOverview>;
  setPreset(preset: Preset): Promise<FeedOverview>;
  setFault(
    upstream: 'status' | 'verify',
    path: string,
    fault: Fault | null,
    times?: number,
  ): Promise<void>;
  clearFaults(): Promise<void>;
  resetVerification(): Promise<void>;
}

async function control<T>(origin: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${origin}/_simulator${path}`, {
    method,
    signal: AbortSignal.timeout(10_000),
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`simulator ${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** The simulator (`simulator/src/main.ts`, through tsx) on a free loopback port, ready when its health check answers. */
export async function spawnSimulator(
  preset: Preset,
  { readyTimeoutMs }: { readyTimeoutMs?: number } = {},
): Promise<SimulatorProcess> {
  const port = await freePort();
  const managed = spawnNode({
    name: 'simulator',
    script: 'simulator/src/main.ts',
    nodeFlags: ['--import', 'tsx'],
    port,
    env: { SIMULATOR_PORT: String(port), SIMULATOR_HOST: LOOPBACK, SIMULATOR_PRESET: preset },
  });
  await waitForHttp(managed, '/_simulator/health', readyTimeoutMs);
  const { origin } = managed;
  return {
    ...managed,
    statusBaseUrl: `${origin}/status/api/v2`,
    verifyBaseUrl: `${origin}/verify`,
    requests: () => control<RequestCounts>(origin, 'GET', '/requests'),
    resetRequests: async () => {
      await control(origin, 'DELETE', '/requests');
    },
    feed: () => control<FeedOverview>(origin, 'GET', '/status-feed'),
    setPreset: (preset_) =>
      control<FeedOverview>(origin, 'PUT', '/status-feed', { preset: preset_ }),
    setFault: async (upstream, path, fault, times) => {
      await control(origin, 'POST', '/faults', {
        upstream,
        path,
        fault,
        ...(times === undefined ? {} : { times }),
      });
    },
    clearFaults: async () => {
      await control(origin, 'DELETE', '/faults');
    },
    resetVerification: async () => {
      await control(origin, 'DELETE', '/verification');
    },
  };
}

// ---------------------------------------------------------------------------------------------
// GraphQL servers

export interface GraphqlServer extends ManagedProcess {
  /** `${origin}/graphql`. */
  readonly url: string;
}

export interface GraphqlAnswer {
  status: number;
  contentType: string;
  /** The answer's headers, lowercase names. */
  headers: Record<string, string>;
  body: Buffer;
  json: { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
}

/**
 * POSTs one GraphQL request body (already JSON) and reads the whole answer, uncoded as the load
 * generator gets it: fetch would otherwise ask for gzip and hand back the bytes decoded, under the
 * gzip representation's headers.
 */
export async function postGraphql(url: string, body: string): Promise<GraphqlAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...GRAPHQL_HEADERS, 'accept-encoding': 'identity' },
    body,
    signal: AbortSignal.timeout(15_000),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? 'application/json',
    headers: Object.fromEntries(response.headers),
    body: bytes,
    json: JSON.parse(bytes.toString('utf8')) as GraphqlAnswer['json'],
  };
}

/** Production settings of this gateway, against the given simulator. */
export function gatewayEnv(simulator: SimulatorProcess, port: number): Record<string, string> {
  return {
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: LOOPBACK,
    STATUS_BASE_URL: simulator.statusBaseUrl,
    VERIFY_BASE_URL: simulator.verifyBaseUrl,
    // The production defaults: a request log line per request, but response-cache hits past 100
    // a second (LOG_REQUESTS=sampled), are part of the cost.
    LOG_LEVEL: 'info',
    // The load generator is one client: without this, its verifications would measure the
    // per-client allowance instead of the verification path.
    VERIFY_RATE_LIMIT: '1000000000',
    // As the Dockerfile sets it.
    MALLOC_ARENA_MAX: '2',
  };
}

/**
 * The V8 flags `npm start` and the Dockerfile give the gateway: an old generation capped at 256 MiB
 * so that V8 collects rather than grows (without the cap, RSS reached 346 MiB in the load test on
 * Node 24), and 8 MiB semi-spaces. A hit allocates about 12 KB (most of it node:http's own
 * objects), so with 2 MiB semi-spaces a scavenge ran every 180 hits at 50 connections and cost
 * 3.9-5.2 µs per hit; with 8 MiB, every 670 hits and 1.2 µs, for at most 12 MiB more young
 * generation (`--trace-gc`, the tiny query). And no allocation-site pretenuring: V8 otherwise
 * decides, from a burst in which every object of some allocation sites survived, to allocate those
 * sites' objects (node:http's among them) straight into the old generation, after which every
 * request's garbage needs a major collection. At 15k hits/s that state (in about three runs of
 * four) cost 33 major collections and 1.1 s of scavenges per 8 s against 2 and 0.09 s without it.
 * No memory reducer either: its collections when a loaded process goes quiet deoptimized node's
 * http internals, which came back slower (the tiny query's rounds from 0.89 to 0.73 of the floor).
 *
 * Read from the Dockerfile's `CMD ["node", …flags, "dist/main.js"]`, so that the benchmark runs
 * the gateway as it ships.
 */
export const GATEWAY_NODE_FLAGS: readonly string[] = shippedNodeFlags();

function shippedNodeFlags(): string[] {
  const dockerfile = readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8');
  const command = /^CMD\s+(\[.*\])\s*$/m.exec(dockerfile)?.[1];
  const argv = command === undefined ? [] : (JSON.parse(command) as string[]);
  if (argv[0] !== 'node' || argv.at(-1) !== 'dist/main.js') {
    throw new Error(
      'the Dockerfile has no CMD ["node", …flags, "dist/main.js"] to run the gateway by',
    );
  }
  return argv.slice(1, -1);
}

export interface ContenderSpec {
  name: string;
  script: string;
  nodeFlags?: readonly string[];
  /** Environment besides PORT/HOST. */
  env: Record<string, string>;
  /** A GET path that answers 2xx once the server is ready. */
  readyPath: string;
  /** The one core it runs on (see `cpu-pinning.ts`); any core when undefined. */
  core?: number | undefined;
  /** A command node runs under (see `SpawnOptions.runUnder`). */
  runUnder?: readonly string[];
  /**
   * How long it may take to answer `readyPath`, or a cold start its first query.
   * @default 20_000 (30_000 for a cold start)
   */
  readyTimeoutMs?: number;
}

export function gatewaySpec(simulator: SimulatorProcess): ContenderSpec {
  return {
    name: 'gateway',
    script: 'dist/main.js',
    // As `npm start` and the Dockerfile run it.
    nodeFlags: GATEWAY_NODE_FLAGS,
    env: gatewayEnv(simulator, 0),
    // Yoga's built-in health check: it answers once the server listens, without upstream calls.
    readyPath: '/health',
  };
}

/** Spawns a contender on a free port (without waiting for it). */
export async function spawnContender(spec: ContenderSpec): Promise<GraphqlServer> {
  const port = await freePort();
  const managed = spawnNode({
    name: spec.name,
    script: spec.script,
    ...(spec.nodeFlags ? { nodeFlags: spec.nodeFlags } : {}),
    port,
    env: { ...spec.env, PORT: String(port), HOST: LOOPBACK },
    core: spec.core,
    ...(spec.runUnder ? { runUnder: spec.runUnder } : {}),
  });
  return { ...managed, url: `${managed.origin}/graphql` };
}

/** Spawns a contender and waits until its ready path answers. */
export async function startContender(spec: ContenderSpec): Promise<GraphqlServer> {
  const server = await spawnContender(spec);
  await waitForHttp(server, spec.readyPath, spec.readyTimeoutMs);
  return server;
}

/**
 * Cold start: spawn to the first answer to `body` with data and no errors, in ms. The request is
 * retried every few ms while the port refuses connections.
 */
export async function coldStart(spec: ContenderSpec, body: string): Promise<number> {
  const server = await spawnContender(spec);
  try {
    let answeredAt = 0;
    await waitUntil(
      server,
      async () => {
        const answer = await postGraphql(server.url, body);
        if (answer.status !== 200 || answer.json.errors || !answer.json.data) return false;
        answeredAt = performance.now();
        return true;
      },
      { timeoutMs: spec.readyTimeoutMs ?? 30_000, intervalMs: 5 },
    );
    return answeredAt - server.spawnedAt;
  } finally {
    await server.stop();
  }
}

/** Guards a whole script: kills it (and, through the exit hook, its children) past `ms`. */
export function watchdog(ms: number, label: string): void {
  setTimeout(() => {
    console.error(`${label}: still running after ${Math.round(ms / 1000)} s, giving up`);
    process.exit(2);
  }, ms).unref();
}

export const mib = (bytes: number | null | undefined) =>
  bytes === null || bytes === undefined ? null : Math.round((bytes / 1024 / 1024) * 10) / 10;
