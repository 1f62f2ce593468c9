/**
 * `npm start`: the gateway as built (`dist/main.js`, or the entry given as the first argument),
 * with the simulator standing in for each upstream whose URL is unset, so that a fresh clone
 * serves a working graph offline. The gateway itself never knows: it gets the simulator's URLs as
 * its configuration. With neither `STATUS_BASE_URL` nor `STATUS_PAGES_FILE` set, it serves three
 * simulated pages (a `STATUS_PAGES_FILE` written for the run): the ledger demo, mapped to the
 * simulated chains 295, 296 and 297, a vendor's larger page and an incident.io-hosted one. Under
 * NODE_ENV=production nothing is simulated, and the gateway refuses to start without both upstreams.
 *
 * Node runs this file as it is (its types stripped), not through tsx: tsx's loader, once
 * registered, sees every module loaded after it, and doubled the CPU the gateway's own modules
 * took to load. So dist/ is brought up to date by `tsc -b` (nothing is compiled when nothing
 * changed: its build info is in dist/), the simulator's TypeScript is loaded with tsx registered
 * for it alone, meanwhile, and the built gateway after, with no loader in the way. An entry given
 * as TypeScript (the tests' `src/main.ts`) is loaded through tsx instead, and nothing is built.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Simulator } from '../simulator/src/server.js';

const UPSTREAMS = [
  // Set by either variable; simulated as several pages, the first the simulator's own feed.
  { variable: 'STATUS_PAGES_FILE', name: 'status feed', simulated: simulatedPagesFile },
  { variable: 'VERIFY_BASE_URL', name: 'verification service', simulated: verifyBaseUrl },
] as const;

const entry = pathToFileURL(resolve(process.argv[2] ?? 'dist/main.js'));
const fromSource = entry.pathname.endsWith('.ts');
const env = process.env;
const unset = UPSTREAMS.filter(
  ({ variable }) =>
    !env[variable]?.trim() && (variable !== 'STATUS_PAGES_FILE' || !env.STATUS_BASE_URL?.trim()),
);
const simulate = unset.length > 0 && env.NODE_ENV !== 'production';

// Both at once: the compiler is a process of its own.
const [simulator] = await Promise.all([
  simulate ? startSimulatorFromSource() : undefined,
  fromSource ? undefined : build(),
]);

// The gateway's own logger (the entry's, built or not), so that log readers see one stream.
const { createLogger, flushLogger, logFormatFor, stdoutLog } = (await loadTypeScript(
  () => import(new URL('observability/logger.js', entry).href),
)) as typeof import('../src/observability/logger.js');
const logger = createLogger('info', stdoutLog(logFormatFor(env.NODE_ENV)));

/** Where each simulated upstream answers, by variable. */
const simulatedAt = new Map<string, { url: string; note: string }>();
if (simulator) {
  for (const { variable, simulated } of unset) {
    const { value, url, note } = simulated(simulator);
    env[variable] = value;
    simulatedAt.set(variable, { url, note });
  }
}
for (const { variable, name } of UPSTREAMS) {
  const simulated = simulatedAt.get(variable);
  // Unset and not simulated (production): the gateway says what is missing.
  if (!simulated && unset.some((upstream) => upstream.variable === variable)) continue;
  const url = simulated?.url ?? env[variable] ?? env.STATUS_BASE_URL;
  logger.info(
    { upstream: name, simulated: simulated !== undefined, url },
    simulated ? `${name}: SIMULATED at ${url} (${simulated.note})` : `${name}: real, at ${url}`,
  );
}
// Out before the gateway writes its own first line.
await flushLogger(logger);

await loadTypeScript(() => import(entry.href));

/**
 * Runs `load` with tsx's loader registered for its imports only when they are TypeScript (the
 * entry is), and for good when the entry is: its modules may import more later.
 */
async function loadTypeScript<T>(load: () => Promise<T>, typeScript = fromSource): Promise<T> {
  if (!typeScript) return load();
  const { register } = await import('tsx/esm/api');
  const unregister = register();
  try {
    return await load();
  } finally {
    if (!fromSource) await unregister();
  }
}

async function startSimulatorFromSource(): Promise<Simulator> {
  const { startSimulator } = await loadTypeScript(() => import('../simulator/src/server.js'), true);
  return startSimulator();
}

/**
 * Brings dist/ up to date with src/: `tsc -b` compiles only when a source, or tsconfig, is newer
 * than its build info (dist/.tsbuildinfo, so that deleting dist/ builds it all again), and then
 * only what changed. Its messages go to stderr: stdout is the log. Exits as it did when it failed.
 */
async function build(): Promise<void> {
  const tsc = join(import.meta.dirname, '..', 'node_modules', 'typescript', 'bin', 'tsc');
  const compiler = spawn(process.execPath, [tsc, '-b', 'tsconfig.build.json'], {
    cwd: join(import.meta.dirname, '..'),
    stdio: ['ignore', 2, 2],
  });
  const [code] = (await once(compiler, 'exit')) as [number | null];
  if (code !== 0) process.exit(code ?? 1);
}

/** What a simulated upstream's variable is set to, where it answers, and what to tell of it. */
interface Simulated {
  readonly value: string;
  readonly url: string;
  readonly note: string;
}

function verifyBaseUrl(simulator: Simulator): Simulated {
  const url = simulator.verifyBaseUrl;
  return { value: url, url, note: 'VERIFY_BASE_URL is unset; the built-in simulator answers' };
}

/** A `STATUS_PAGES_FILE` of the simulator's pages, written to a directory of its own. */
function simulatedPagesFile(simulator: Simulator): Simulated {
  const groups = new Map(
    simulator.statusFeed.summary.components
      .filter((component) => component.group)
      .map((component) => [component.name, component.id]),
  );
  const chains = [
    ['295', 'Mainnet'],
    ['296', 'Testnet'],
    ['297', 'Previewnet'],
  ].flatMap(([chainId, network]) => {
    const id = groups.get(network as string);
    return id ? [{ chainId, components: [id] }] : [];
  });
  const pages = [
    { slug: 'ledger', name: 'Ledger network', baseUrl: simulator.statusBaseUrl, chains },
    { slug: 'cloud', name: 'A cloud vendor', baseUrl: simulator.statusPageUrl('cloud') },
    { slug: 'ai-vendor', name: 'An AI vendor', baseUrl: simulator.statusPageUrl('ai-vendor') },
  ];
  const file = join(mkdtempSync(join(tmpdir(), 'status-pages-')), 'status-pages.json');
  writeFileSync(file, JSON.stringify({ pages }, null, 2));
  return {
    value: file,
    url: simulator.statusBaseUrl,
    note: `STATUS_BASE_URL and STATUS_PAGES_FILE are unset; the built-in simulator answers, ${pages.length} pages: ${pages.map((page) => page.slug).join(', ')}, listed in ${file}`,
  };
}
