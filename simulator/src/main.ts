/**
 * Standalone simulator: `npm run simulator` (`tsx simulator/src/main.ts`).
 * Env: SIMULATOR_PORT (default 4010), SIMULATOR_HOST (default 127.0.0.1),
 * SIMULATOR_PRESET (demo | realistic | large; default demo), SIMULATOR_SOURCIFY (latest | 3.12.1 |
 * 3.9.1 | session-only | mixed; default latest).
 */
import { type Simulator, type SourcifyServerVersion, startSimulator } from './server.js';
import {
  createSimulatedFeed,
  STATUS_FEED_PRESETS,
  type StatusFeedPreset,
} from './status-feed/fixture.js';

interface Settings {
  port: number;
  host: string;
  preset: StatusFeedPreset;
  sourcify: SourcifyServerVersion | null;
}

const SOURCIFY_SERVERS: Record<string, SourcifyServerVersion | null> = {
  latest: 'latest',
  '3.12.1': '3.12.1',
  '3.9.1': '3.9.1',
  'session-only': 'session-only',
  mixed: null,
};

function readSettings(env: NodeJS.ProcessEnv): Settings | string {
  const rawPort = env.SIMULATOR_PORT?.trim() || '4010';
  const port = /^\d{1,5}$/.test(rawPort) ? Number(rawPort) : Number.NaN;
  if (!(port >= 0 && port <= 65_535)) {
    return `SIMULATOR_PORT must be an integer from 0 to 65535, got "${rawPort}"`;
  }
  const host = env.SIMULATOR_HOST?.trim() || '127.0.0.1';
  if (/[\s/]/.test(host)) return `SIMULATOR_HOST must be a host name or IP address, got "${host}"`;
  const rawPreset = env.SIMULATOR_PRESET?.trim() || 'demo';
  const presets = Object.keys(STATUS_FEED_PRESETS) as StatusFeedPreset[];
  const preset = presets.find((name) => name === rawPreset);
  if (!preset) return `SIMULATOR_PRESET must be one of ${presets.join(', ')}, got "${rawPreset}"`;
  const rawSourcify = env.SIMULATOR_SOURCIFY?.trim() || 'latest';
  if (!Object.hasOwn(SOURCIFY_SERVERS, rawSourcify)) {
    return `SIMULATOR_SOURCIFY must be one of ${Object.keys(SOURCIFY_SERVERS).join(', ')}, got "${rawSourcify}"`;
  }
  return { port, host, preset, sourcify: SOURCIFY_SERVERS[rawSourcify] ?? null };
}

function fail(message: string): void {
  process.stderr.write(`simulator: ${message}\n`);
  process.exitCode = 1;
}

async function main(): Promise<void> {
  const settings = readSettings(process.env);
  if (typeof settings === 'string') return fail(settings);

  let simulator: Simulator;
  try {
    simulator = await startSimulator({
      port: settings.port,
      host: settings.host,
      statusFeed: createSimulatedFeed(STATUS_FEED_PRESETS[settings.preset]),
      sourcify: settings.sourcify,
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `${settings.host}:${settings.port}`;
    if (code === 'EADDRINUSE') return fail(`port ${settings.port} is already in use (${where})`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      return fail(`cannot listen on host "${settings.host}" (${code})`);
    }
    return fail(`cannot start on ${where}: ${error instanceof Error ? error.message : error}`);
  }

  process.stdout.write(
    `Simulator ready (preset ${settings.preset}): status feed at ${simulator.statusBaseUrl}, ` +
      `more pages at ${simulator.statusPageUrl('<slug>')} (cloud, ai-vendor), ` +
      `contract verification at ${simulator.verifyBaseUrl}\n`,
  );

  let stopping = false;
  const stop = (): void => {
    if (stopping) {
      // A second signal while closing means "now".
      process.exit(1);
    }
    stopping = true;
    simulator.close().then(
      () => {
        process.exitCode = 0;
      },
      (error: unknown) => fail(`error while closing: ${String(error)}`),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) =>
  fail(error instanceof Error ? (error.stack ?? error.message) : String(error)),
);
