/**
 * `npm start`: the gateway as built (`dist/main.js`, or the entry given as the first argument),
 * with the simulator standing in for each upstream whose URL is unset, so that a fresh clone
 * serves a working graph offline. The gateway itself never knows: it gets the simulator's URLs as
 * its configuration. With neither `STATUS_BASE_URL` nor `STATUS_PAGES_FILE` set, it serves three
 * simulated pages (a `STATUS_PAGES_FILE` written for the run): the ledger demo, mapped to the
 * simulated chains 295, 296 and 297, a vendor's larger page and an incident.io-hosted one. Under
 * NODE_ENV=production nothing is simulated, and the gateway refuses to start without both upstreams.
 *
 * What a second start costs is what it waits for, so nothing waits that need not:
 * - Node runs this file as it is (its types stripped), not through tsx: tsx's loader, once
 *   registered, sees every module loaded after it, and doubled the CPU the gateway's modules took.
 * - dist/ is brought up to date by `tsc -b`, which compiles only what changed (its build info is
 *   in dist/, so that deleting dist/ builds it all again); when nothing under src/ is newer than
 *   that build info, not even the compiler is started.
 * - The simulator runs on a thread of its own (scripts/simulator-thread.ts, its TypeScript through
 *   tsx there), loading while this thread loads the gateway's modules.
 * An entry given as TypeScript (the tests' `src/main.ts`) is loaded through tsx, and nothing is built.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Simulated } from './simulator-thread.js';

const UPSTREAMS = [
  // Set by either variable; simulated as several pages, the first the simulator's own feed.
  { variable: 'STATUS_PAGES_FILE', name: 'status feed' },
  { variable: 'VERIFY_BASE_URL', name: 'verification service' },
] as const;

const ROOT = join(import.meta.dirname, '..');
const entry = pathToFileURL(resolve(process.argv[2] ?? 'dist/main.js'));
const fromSource = entry.pathname.endsWith('.ts');
const env = process.env;
const unset = UPSTREAMS.filter(
  ({ variable }) =>
    !env[variable]?.trim() && (variable !== 'STATUS_PAGES_FILE' || !env.STATUS_BASE_URL?.trim()),
);

if (fromSource) {
  const { register } = await import('tsx/esm/api');
  register();
}
const simulating = unset.length > 0 && env.NODE_ENV !== 'production';
const [simulated, logging] = await Promise.all([
  simulating ? simulate(unset.map(({ variable }) => variable)) : [],
  (fromSource ? Promise.resolve() : build()).then(() => loadGateway(simulating)),
]);

// The gateway's own logger, so that log readers see one stream.
const { createLogger, flushLogger, logFormatFor, stdoutLog } = logging;
const logger = createLogger('info', stdoutLog(logFormatFor(env.NODE_ENV)));
for (const { variable, value } of simulated) env[variable] = value;
for (const { variable, name } of UPSTREAMS) {
  const simulatedHere = simulated.find((upstream) => upstream.variable === variable);
  // Unset and not simulated (production): the gateway says what is missing.
  if (!simulatedHere && unset.some((upstream) => upstream.variable === variable)) continue;
  const url = simulatedHere?.url ?? env[variable] ?? env.STATUS_BASE_URL;
  logger.info(
    { upstream: name, simulated: simulatedHere !== undefined, url },
    simulatedHere
      ? `${name}: SIMULATED at ${url} (${simulatedHere.note})`
      : `${name}: real, at ${url}`,
  );
}
// Out before the gateway writes its own first line.
await flushLogger(logger);

await import(entry.href);

/**
 * Starts the simulator on its own thread for `variables`; resolves with what to set each to once
 * it answers. The thread keeps the process alive as long as the gateway runs, and ends with it.
 */
async function simulate(variables: readonly string[]): Promise<Simulated[]> {
  const thread = new Worker(new URL('./simulator-thread.ts', import.meta.url), {
    workerData: { variables },
  });
  const [simulated] = (await Promise.race([
    once(thread, 'message'),
    once(thread, 'exit').then(([code]) => {
      throw new Error(`the simulator's thread exited (${code}) before it answered`);
    }),
  ])) as [Simulated[]];
  return simulated;
}

/**
 * Loads the gateway's logger and, while the simulator starts (`early`), its other modules: what
 * the entry imports, less the entry, which reads the configuration as it loads.
 */
async function loadGateway(
  early: boolean,
): Promise<typeof import('../src/observability/logger.js')> {
  const [logging] = await Promise.all([
    import(new URL('observability/logger.js', entry).href),
    ...(early
      ? ['config.js', 'gateway.js'].map((module) => import(new URL(module, entry).href))
      : []),
  ]);
  return logging as typeof import('../src/observability/logger.js');
}

/**
 * Brings dist/ up to date with src/: `tsc -b` compiles only when a source, or tsconfig, is newer
 * than its build info (dist/.tsbuildinfo), and then only what changed. Its messages go to stderr:
 * stdout is the log. Exits as it did when it failed.
 */
async function build(): Promise<void> {
  if (builtSince()) return;
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const compiler = spawn(process.execPath, [tsc, '-b', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: ['ignore', 2, 2],
  });
  const [code] = (await once(compiler, 'exit')) as [number | null];
  if (code !== 0) process.exit(code ?? 1);
}

/**
 * Whether nothing the build reads changed since dist/ was built: no file or directory under src/
 * (a directory changes when a file is added or removed), no tsconfig and no lockfile is newer than
 * the build info. `tsc -b` asks the same of the same times; this spares starting it (a second,
 * on a busy machine) when the answer is no.
 */
function builtSince(): boolean {
  let builtAt: number;
  try {
    builtAt = statSync(join(ROOT, 'dist', '.tsbuildinfo')).mtimeMs;
  } catch {
    return false;
  }
  const inputs = [
    'src',
    ...readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).map((path) =>
      join('src', path),
    ),
    'tsconfig.json',
    'tsconfig.build.json',
    'package-lock.json',
  ];
  return inputs.every((path) => statSync(join(ROOT, path)).mtimeMs <= builtAt);
}
