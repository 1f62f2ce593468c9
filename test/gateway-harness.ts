import type { ExecutionResult } from 'graphql';
import type { LevelWithSilent } from 'pino';
import { createGateway, type Gateway, type GatewayOptions } from '../src/gateway.js';
import { createLogger } from '../src/logger.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../src/simulator/server.js';

export interface Harness {
  readonly simulator: Simulator;
  readonly gateway: Gateway;
  /** Every line the gateway logged, parsed. */
  readonly logs: Record<string, unknown>[];
  /** Every line the gateway logged, as written. */
  readonly rawLogs: string[];
  /** POSTs an operation to `/graphql` and returns the status, headers and parsed body. */
  execute<Data = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    options?: { headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: ExecutionResult<Data> }>;
  close(): Promise<void>;
}

export type HarnessOptions = Partial<Omit<GatewayOptions, 'logger'>> & {
  readonly simulator?: SimulatorOptions;
  /** @default 'debug' */
  readonly logLevel?: LevelWithSilent;
};

/**
 * A gateway wired to a fresh simulator over loopback, with fast retries so that fault tests do not
 * wait for production backoff.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const { simulator: simulatorOptions, logLevel = 'debug', ...gatewayOptions } = options;
  const simulator = await startSimulator(simulatorOptions);
  const logs: Record<string, unknown>[] = [];
  const rawLogs: string[] = [];
  const logger = createLogger(logLevel, {
    write: (line: string) => {
      rawLogs.push(line);
      logs.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  const gateway = createGateway({
    statusBaseUrl: simulator.statusBaseUrl,
    verifyBaseUrl: simulator.verifyBaseUrl,
    upstreamRetryDelayMs: 5,
    upstreamTimeoutMs: 1_000,
    logger,
    ...gatewayOptions,
  });

  return {
    simulator,
    gateway,
    logs,
    rawLogs,
    async execute(query, variables, { headers = {} } = {}) {
      const response = await gateway.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, headers: response.headers, body: await response.json() };
    },
    close: () => simulator.close(),
  };
}
