import { appendFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { relative } from 'node:path';
import type { ExecutionResult } from 'graphql';
import type { LevelWithSilent } from 'pino';
import { expect, inject } from 'vitest';
import {
  type Simulator,
  type SimulatorOptions,
  startSimulator,
} from '../../simulator/src/server.js';
import { type ConfigVariableName, loadConfig } from '../../src/config.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createHttpServer, type HttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/observability/logger.js';

export interface Harness {
  readonly simulator: Simulator;
  readonly gateway: Gateway;
  /** The gateway's HTTP server, listening on loopback with the listener production uses. */
  readonly server: Server;
  /** Drains the server as `main.ts` does on SIGTERM. */
  readonly drain: HttpServer['drain'];
  /** `http://127.0.0.1:<port>`: where the gateway listens. */
  readonly origin: string;
  /** Every line the gateway logged, parsed. */
  readonly logs: Record<string, unknown>[];
  /** Every line the gateway logged, as written. */
  readonly rawLogs: string[];
  /** Sends a request to the gateway over HTTP; `path` is relative to `origin`. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** POSTs an operation to `/graphql` and returns the status, headers and parsed body. */
  execute<Data = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    options?: { headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: ExecutionResult<Data> }>;
  /**
   * `execute` as a reader sees the feed once a refetch is done: a read past the TTL is answered
   * from the last snapshot while it starts the refetch (stale-while-revalidate), so this reads,
   * lets the refetch land, and reads again.
   */
  executeAfterRefetch<Data = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<{ status: number; headers: Headers; body: ExecutionResult<Data> }>;
  /**
   * The value of one series on `/metrics`, written as Prometheus writes it (`name{labels}`); 0
   * when it is not there.
   */
  metric(series: string): Promise<number>;
  close(): Promise<void>;
}

/** Environment variables for a gateway, as an operator sets them; numbers and flags as text. */
export type GatewayEnv = Partial<Record<ConfigVariableName, string | number | boolean>>;

/** The configuration `main.ts` loads from `env` (over `defaults`), under NODE_ENV=test. */
export function gatewayConfig(env: GatewayEnv, defaults: Record<string, string> = {}) {
  return loadConfig({
    NODE_ENV: 'test',
    ...defaults,
    ...Object.fromEntries(Object.entries(env).map(([name, value]) => [name, String(value)])),
  });
}

/** A logger at `level` that keeps every line it writes, parsed (`logs`) and as written. */
export function keptLogger(level: LevelWithSilent) {
  const logs: Record<string, unknown>[] = [];
  const rawLogs: string[] = [];
  const logger = createLogger(level, {
    write: (line: string) => {
      rawLogs.push(line);
      logs.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  return { logger, logs, rawLogs };
}

export interface HarnessOptions {
  /**
   * Environment variables for the gateway, as an operator sets them; numbers and flags as text.
   * A function is given the simulator first (for a `STATUS_PAGES_FILE` naming its pages).
   */
  readonly env?: GatewayEnv | ((simulator: Simulator) => GatewayEnv);
  readonly simulator?: SimulatorOptions;
  /** @default 'debug' */
  readonly logLevel?: LevelWithSilent;
}

/**
 * A gateway configured as `main.ts` configures it (from environment variables), serving on
 * loopback through the production listener, wired to a fresh simulator; with fast retries so that
 * fault tests do not wait for production backoff.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const { simulator: simulatorOptions, logLevel = 'debug' } = options;
  // Counted for the run's limit (test/global-setup.ts).
  appendFileSync(
    inject('harnessStarts'),
    `${relative(process.cwd(), expect.getState().testPath ?? '?')}\n`,
  );
  const simulator = await startSimulator(simulatorOptions);
  const env = typeof options.env === 'function' ? options.env(simulator) : (options.env ?? {});
  const { logger, logs, rawLogs } = keptLogger(logLevel);
  const config = gatewayConfig(env, {
    // A pages file lists the pages itself (both set is a configuration error).
    ...(env.STATUS_PAGES_FILE === undefined ? { STATUS_BASE_URL: simulator.statusBaseUrl } : {}),
    VERIFY_BASE_URL: simulator.verifyBaseUrl,
    UPSTREAM_RETRY_DELAY_MS: '5',
    UPSTREAM_TIMEOUT_MS: '1000',
    // Suites verify many times from one address; the per-client limit has its own tests.
    VERIFY_RATE_LIMIT: '100000',
  });
  const gateway = createGateway(config, { logger });
  const { server, drain } = createHttpServer(gateway.listener, config.http, {
    upgrade: gateway.upgrade,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const send = (path: string, init?: RequestInit) => fetch(`${origin}${path}`, init);
  const execute: Harness['execute'] = async (query, variables, { headers = {} } = {}) => {
    const response = await send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, headers: response.headers, body: await response.json() };
  };
  return {
    simulator,
    gateway,
    server,
    drain,
    origin,
    logs,
    rawLogs,
    fetch: send,
    execute,
    async executeAfterRefetch(query, variables) {
      await execute(query, variables);
      await new Promise((resolve) => setTimeout(resolve, 50));
      return execute(query, variables);
    },
    async metric(series) {
      const text = await (await send('/metrics')).text();
      const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
      return line ? Number(line.split(' ').at(-1)) : 0;
    },
    async close() {
      const closed = server.listening
        ? new Promise<void>((resolve) => server.close(() => resolve()))
        : undefined;
      server.closeAllConnections();
      // Ends the subscriptions and closes the WebSockets, which the server waits for.
      await gateway.close();
      await closed;
      await simulator.close();
    },
  };
}
