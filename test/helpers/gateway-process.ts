/**
 * The gateway as production runs it, in a process of its own: the production entry
 * (`dist/main.js`, the Dockerfile's CMD, built by test/global-setup.ts) on a free loopback port, for tests that need several replicas.
 */
import {
  freePort,
  LOOPBACK,
  type ManagedProcess,
  spawnNode,
  waitForHttp,
} from '../../bench/lib/processes.js';

/** How long a gateway process has to answer `/health`. */
const STARTUP_TIMEOUT_MS = 60_000;

export interface GatewayProcess extends ManagedProcess {
  /** Every line it logged, parsed (lines that are not JSON are left out). */
  readonly logs: Record<string, unknown>[];
  /** Every line it wrote, as written. */
  readonly rawLogs: string[];
  /** POSTs an operation to `/graphql`. */
  execute<Data = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<{ status: number; body: { data?: Data; errors?: { message: string }[] } }>;
  /** `GET /readiness`, parsed. */
  readiness(): Promise<Record<string, unknown> & { redis?: { state: string; since: string } }>;
  /** The value of a metric series in `/metrics` (labels as written there), `undefined` if absent. */
  metric(series: string): Promise<number | undefined>;
  /** Log lines with this message. */
  logged(message: string): Record<string, unknown>[];
}

/**
 * Starts a gateway process with `env` (besides PORT and HOST), and node's `nodeFlags` (the
 * Dockerfile's, for a heap sized as production's), and waits until it answers.
 */
export async function startGatewayProcess(
  name: string,
  env: Record<string, string>,
  { nodeFlags = [] }: { nodeFlags?: readonly string[] } = {},
): Promise<GatewayProcess> {
  const port = await freePort();
  const logs: Record<string, unknown>[] = [];
  const rawLogs: string[] = [];
  const managed = spawnNode({
    name,
    script: 'dist/main.js',
    nodeFlags,
    port,
    env: { LOG_LEVEL: 'info', ...env, PORT: String(port), HOST: LOOPBACK },
    onLine: (line) => {
      rawLogs.push(line);
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // Not a log line.
      }
    },
  });
  // A start takes about a second of CPU, several seconds on a loaded machine.
  await waitForHttp(managed, '/health', STARTUP_TIMEOUT_MS);
  const get = (path: string) =>
    fetch(`${managed.origin}${path}`, { signal: AbortSignal.timeout(10_000) });
  return {
    ...managed,
    logs,
    rawLogs,
    async execute(query, variables) {
      const response = await fetch(`${managed.origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(10_000),
      });
      return { status: response.status, body: await response.json() };
    },
    readiness: async () => (await get('/readiness')).json(),
    async metric(series) {
      const text = await (await get('/metrics')).text();
      const line = text.split('\n').find((row) => row.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    },
    logged: (message) => logs.filter((line) => line.msg === message),
  };
}
