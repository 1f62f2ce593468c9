/**
 * The production entry (the Dockerfile's command): reads the configuration, listens, and closes
 * the gateway on SIGTERM or SIGINT. It knows nothing of the simulator: `npm start` starts one
 * beside it when the upstream URLs are unset (scripts/start.ts).
 */
import { type Config, ConfigError, loadConfig } from './config.js';
import { createGateway } from './gateway.js';
import { createHttpServer } from './http/server.js';
import { createLogger, flushLogger } from './observability/logger.js';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}

const logger = createLogger(config.logLevel);

// A promise a library left without a handler must not take every other client's request down
// with the process: it is a bug to log and fix, not a reason to stop serving.
process.on('unhandledRejection', (reason) => {
  logger.error({ err: reason }, 'unhandled promise rejection (the gateway keeps serving)');
});
const gateway = createGateway(config, { logger });
const { server, drain } = createHttpServer(gateway.listener, config.http);

server.on('error', (error) => {
  logger.fatal({ err: error }, 'the server could not listen');
  void flushLogger(logger).then(() => process.exit(1));
});
server.listen(config.server.port, config.server.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.server.port;
  const url = `http://${config.server.host ?? 'localhost'}:${port}${gateway.graphqlEndpoint}`;
  logger.info(
    {
      url,
      graphiql: config.graphiql,
      statusFeed: config.statusFeed.baseUrl,
      verificationService: `${config.verification.baseUrl} (${config.verification.api})`,
    },
    config.graphiql ? `GraphQL and GraphiQL at ${url}` : `GraphQL at ${url}`,
  );
  logger.flush();
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal, graceMs: config.server.shutdownGraceMs }, 'shutting down');
  gateway.quiesce();
  await drain(config.server.shutdownGraceMs);
  await gateway.close();
  logger.info('stopped');
  await flushLogger(logger);
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
