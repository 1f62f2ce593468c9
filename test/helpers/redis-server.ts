/**
 * A real redis-server for the tests that share state between replicas: Debian's package,
 * installed when missing, on a free loopback port with a temporary directory, persisting nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { freePort } from '../../bench/lib/processes.js';
import { createLogger } from '../../src/observability/logger.js';
import { RedisConnection } from '../../src/redis/redis-connection.js';
import { eventually } from './eventually.js';
import { ensureSystemPackage } from './system-package.js';

/** How long a first install may take (`apt-get update` and the package): for `beforeAll`. */
export const REDIS_INSTALL_TIMEOUT_MS = 10 * 60_000;

export interface RedisServer {
  /** `redis://127.0.0.1:<port>`, with the password when there is one. */
  readonly url: string;
  readonly port: number;
  /** Whether the server process runs now. */
  readonly running: boolean;
  /** Ends the server at once (SIGKILL), as a crash or a lost host would. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty, as a restarted server without persistence is. */
  restart(): Promise<void>;
  /** Stops it from answering while its connections stay open (SIGSTOP), as a hung server. */
  pause(): void;
  /** Lets a paused server answer again (SIGCONT). */
  resume(): void;
  /** Stops it for good and removes its directory. */
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  /** Required with AUTH (`requirepass`). */
  readonly password?: string;
}

const living = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of living) child.kill('SIGKILL');
});

/** Starts redis-server (installing it first if needed) and resolves once it accepts connections. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const binary = await ensureSystemPackage({ command: 'redis-server', package: 'redis-server' });
  const port = await freePort();
  const directory = mkdtempSync(join(tmpdir(), 'redis-test-'));
  let child: ChildProcess | undefined;

  async function launch(): Promise<void> {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      directory,
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
      '--loglevel',
      'notice',
      ...(options.password ? ['--requirepass', options.password] : []),
    ];
    const started = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    living.add(started);
    started.on('exit', () => living.delete(started));
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        started.kill('SIGKILL');
        reject(new Error(`redis-server did not start within 10 s:\n${output}`));
      }, 10_000);
      const read = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      started.stdout?.on('data', read);
      started.stderr?.on('data', read);
      started.on('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new Error(`redis-server exited (${signal ?? code}) before it was ready:\n${output}`),
        );
      });
    });
  }

  async function end(signal: NodeJS.Signals): Promise<void> {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(signal);
    // A paused server ends only once it runs again.
    running.kill('SIGCONT');
    await exited;
  }

  await launch();
  const auth = options.password ? `:${encodeURIComponent(options.password)}@` : '';
  return {
    url: `redis://${auth}127.0.0.1:${port}`,
    port,
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    kill: () => end('SIGKILL'),
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    restart: async () => {
      await end('SIGKILL');
      await launch();
    },
    stop: async () => {
      await end('SIGTERM');
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

export interface TestConnection {
  readonly redis: RedisConnection;
  /** The logger its lines come from, for what the test builds over the connection. */
  readonly logger: Logger;
  /** Every line its logger wrote, parsed. */
  readonly logs: Record<string, unknown>[];
}

/**
 * A connection to `server` as one replica holds it, with a key prefix of the test's own, a short
 * command timeout, and a logger whose lines the test reads. Resolves once it is connected.
 */
export async function connectTo(
  server: RedisServer,
  { keyPrefix, commandTimeoutMs = 200 }: { keyPrefix: string; commandTimeoutMs?: number },
): Promise<TestConnection> {
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger('debug', {
    write: (line: string) => {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  const url = new URL(server.url);
  url.password = '';
  const redis = new RedisConnection({
    url: server.url,
    loggedUrl: url.href,
    keyPrefix,
    commandTimeoutMs,
    logger,
    retryMs: 100,
  });
  await eventually(() => redis.connected);
  return { redis, logger, logs };
}

export interface RedisSuite {
  /** The suite's redis-server, started before its first test. */
  readonly server: RedisServer;
  /**
   * `count` connections, as `count` replicas of one gateway hold them (a key prefix of their own,
   * fresh for each call); closed after the test.
   */
  replicas(count: number, options?: { commandTimeoutMs?: number }): Promise<TestConnection[]>;
}

/**
 * A redis-server for the suite it is called in: started (and installed if need be) before its
 * tests, running again after each (a test may kill or pause it), stopped after the last.
 */
export function useRedisServer(options: RedisServerOptions = {}): RedisSuite {
  let server: RedisServer | undefined;
  let open: TestConnection[] = [];
  beforeAll(async () => {
    server = await startRedisServer(options);
  }, REDIS_INSTALL_TIMEOUT_MS);
  afterEach(async () => {
    await Promise.all(open.map(({ redis }) => redis.close()));
    open = [];
    if (!server) return;
    server.resume();
    if (!server.running) await server.restart();
  });
  afterAll(() => server?.stop());
  const started = () => {
    if (!server) throw new Error('redis-server is not started yet');
    return server;
  };
  return {
    get server() {
      return started();
    },
    async replicas(count, { commandTimeoutMs } = {}) {
      const keyPrefix = `test-${randomUUID()}:`;
      const connections = await Promise.all(
        Array.from({ length: count }, () =>
          connectTo(started(), {
            keyPrefix,
            ...(commandTimeoutMs === undefined ? {} : { commandTimeoutMs }),
          }),
        ),
      );
      open.push(...connections);
      return connections;
    },
  };
}
