import { createServer } from 'node:http';
import { EnvironmentError, parseEnvironment } from './env.js';
import { createGateway } from './gateway.js';
import { createLogger, flushLogger } from './logger.js';
import { type Simulator, startSimulator } from './simulator/server.js';

let env: ReturnType<typeof parseEnvironment>;
try {
  env = parseEnvironment();
} catch (error) {
  if (!(error instanceof EnvironmentError)) throw error;
  console.error(error.message);
  process.exit(1);
}

const logger = createLogger(env.LOG_LEVEL);

let simulator: Simulator | undefined;
if (!env.STATUS_BASE_URL || !env.VERIFY_BASE_URL) {
  simulator = await startSimulator();
  logger.info(
    { statusBaseUrl: simulator.statusBaseUrl, verifyBaseUrl: simulator.verifyBaseUrl },
    'STATUS_BASE_URL or VERIFY_BASE_URL is unset: serving them from the built-in simulator',
  );
}

const production = env.NODE_ENV === 'production';
const gateway = createGateway({
  statusBaseUrl: env.STATUS_BASE_URL ?? (simulator as Simulator).statusBaseUrl,
  verifyBaseUrl: env.VERIFY_BASE_URL ?? (simulator as Simulator).verifyBaseUrl,
  statusCacheTtlMs: env.STATUS_CACHE_TTL_MS,
  statusMaxStaleMs: env.STATUS_MAX_STALE_MS,
  upstreamTimeoutMs: env.UPSTREAM_TIMEOUT_MS,
  ...(env.STATUS_TIMEOUT_MS ? { statusTimeoutMs: env.STATUS_TIMEOUT_MS } : {}),
  ...(env.VERIFY_TIMEOUT_MS ? { verifyTimeoutMs: env.VERIFY_TIMEOUT_MS } : {}),
  upstreamRetries: env.UPSTREAM_RETRIES,
  circuitFailureThreshold: env.CIRCUIT_FAILURE_THRESHOLD,
  circuitCooldownMs: env.CIRCUIT_COOLDOWN_MS,
  verifyApi: env.VERIFY_API,
  verifyWaitMs: env.VERIFY_WAIT_MS,
  verifyChainsTtlMs: env.VERIFY_CHAINS_TTL_MS,
  sessionCookieSecure: env.SESSION_COOKIE_SECURE ?? production,
  maxBodyBytes: env.MAX_BODY_BYTES,
  limits: {
    maxDepth: env.MAX_DEPTH,
    maxAliases: env.MAX_ALIASES,
    maxCost: env.MAX_COST,
    maxTokens: env.MAX_TOKENS,
    maxDirectives: env.MAX_DIRECTIVES,
    introspection: env.INTROSPECTION ?? !production,
  },
  graphiql: env.GRAPHIQL ?? !production,
  corsOrigins: env.CORS_ORIGINS,
  development: env.NODE_ENV === 'development',
  logger,
});

const server = createServer(gateway.listener);
server.on('error', (error) => {
  logger.fatal({ err: error }, 'the server could not listen');
  void flushLogger(logger).then(() => process.exit(1));
});
server.listen(env.PORT, env.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : env.PORT;
  const host = env.HOST ?? 'localhost';
  logger.info(`GraphQL and GraphiQL at http://${host}:${port}${gateway.graphqlEndpoint}`);
  logger.flush();
});

/** How long in-flight requests get to finish once a shutdown begins. */
const SHUTDOWN_GRACE_MS = 10_000;

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  server.closeIdleConnections();
  setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await simulator?.close();
  logger.info('stopped');
  await flushLogger(logger);
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
