import {
  type Simulator,
  type SimulatorOptions,
  startSimulator,
} from '../../simulator/src/server.js';
import { loadConfig } from '../../src/config.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/observability/logger.js';

export interface InProcessGateway {
  readonly simulator: Simulator;
  readonly gateway: Gateway;
  /** The GraphQL endpoint, on loopback, served by the production server and listener. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * A gateway and a simulator in this process, the gateway configured from environment variables
 * as `main.ts` configures it and served by the production HTTP server: for benchmarks that time
 * single requests rather than load a separate process.
 */
export async function startInProcessGateway(
  options: {
    env?: Record<string, string>;
    simulator?: SimulatorOptions;
    /** @default 'warn' */
    logLevel?: 'warn' | 'error';
  } = {},
): Promise<InProcessGateway> {
  const simulator = await startSimulator(options.simulator);
  const config = loadConfig({
    STATUS_BASE_URL: simulator.statusBaseUrl,
    VERIFY_BASE_URL: simulator.verifyBaseUrl,
    ...options.env,
  });
  const gateway = createGateway(config, { logger: createLogger(options.logLevel ?? 'warn') });
  const { server, drain } = createHttpServer(gateway.listener, config.http);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    simulator,
    gateway,
    url: `http://127.0.0.1:${port}/graphql`,
    async close() {
      await drain(1_000);
      await gateway.close();
      await simulator.close();
    },
  };
}
