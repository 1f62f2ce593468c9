/**
 * The production entry (the Dockerfile's command): reads the configuration, listens, closes the
 * gateway on SIGTERM or SIGINT, and reads STATUS_PAGES_FILE again on SIGHUP. It knows nothing of the simulator: `npm start` starts one
 * beside it when the upstream URLs are unset (scripts/start.ts).
 *
 * With `GATEWAY_WORKERS` above 1 this process is the replica's primary (`cluster/primary.ts`),
 * which forks that many workers of this same entry; each worker is the gateway below, on the
 * port they share. With 1 there is no primary: this process is the gateway.
 */
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import { PrimaryLink } from './cluster/primary-link.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { createHttpServer } from './http/server.js';
import { createLogger, flushLogger, logFormatFor, stdoutLog } from './observability/logger.js';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}

if (config.server.workers > 1 && cluster.isPrimary) {
  // The gateway's modules are left unloaded here: the primary serves no request.
  (await import('./cluster/primary.js')).runPrimary(config);
} else {
  await serve(config);
}

async function serve(config: Config) {
  // A worker's lines say which it is: `worker`, node:cluster's id (on every line, the request
  // log's too), and `pid` (pino leaves it out of the bindings a hit's line is built from).
  const stdout = stdoutLog(logFormatFor(config.environment));
  const logger = cluster.worker
    ? createLogger(config.logLevel, stdout).child({ worker: cluster.worker.id, pid: process.pid })
    : createLogger(config.logLevel, stdout);

  // A promise a library left without a handler must not take every other client's request down
  // with the process: it is a bug to log and fix, not a reason to stop serving.
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection (the gateway keeps serving)');
  });
  const { createGateway } = await import('./gateway.js');
  const primary = cluster.isWorker ? new PrimaryLink({ logger }) : undefined;
  const gateway = createGateway(config, { logger, primary });
  const api = createHttpServer(gateway.listener, config.http, { upgrade: gateway.upgrade });
  const metricsServer =
    gateway.metricsListener && createHttpServer(gateway.metricsListener, config.http);

  const listen = (server: Server, port: number, variable: 'PORT' | 'METRICS_PORT') =>
    new Promise<number>((resolve) => {
      server.on('error', (error: NodeJS.ErrnoException) => {
        const why = listenProblem(error, variable, port, config.server.host);
        // A known cause is the operator's to fix, said in one line; anything else keeps its stack.
        if (why) logger.fatal({ [variable]: port, code: error.code }, why);
        else logger.fatal({ err: error, [variable]: port }, 'the server could not listen');
        void flushLogger(logger).then(() => process.exit(1));
      });
      // Connections the kernel may hold before node accepts them: node's default (511) overflowed
      // when a crowd connected at once (three bursts of 900 subscribers: 838 SYNs dropped, 0 with
      // this), and each dropped SYN waits for its retransmission (1 s, then 3 s), /health's probe
      // among them. The kernel caps it at net.core.somaxconn.
      server.listen({ port, host: config.server.host, backlog: 4096 }, () => {
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });

  const [port, metricsPort] = await Promise.all([
    listen(api.server, config.server.port, 'PORT'),
    metricsServer && config.metricsPort !== undefined
      ? listen(metricsServer.server, config.metricsPort, 'METRICS_PORT')
      : undefined,
  ]);
  const origin = (listening: number) => {
    const host = config.server.host ?? 'localhost';
    // An IPv6 address (`HOST=::`) is written in brackets in a URL.
    return `http://${host.includes(':') ? `[${host}]` : host}:${listening}`;
  };
  const url = `${origin(port)}${gateway.graphqlEndpoint}`;
  const metricsUrl = `${origin(metricsPort ?? port)}/metrics`;
  // What is actually on, so that an operator reading the first lines knows what this replica serves.
  logger.info(
    {
      url,
      environment: config.environment,
      graphiql: config.graphiql,
      introspection: config.limits.introspection,
      cors: config.cors ? config.cors.origins : 'same-origin only',
      metrics: metricsPort === undefined ? `${metricsUrl} (API port)` : metricsUrl,
      tracing: config.tracing ? config.tracing.tracesUrl : 'off',
      statusBoard: config.statusBoard ? `${origin(port)}/status` : 'off',
      redis: config.redis ? config.redis.loggedUrl : 'off',
      statusPages: config.statusFeed.pages.length,
      statusFeed: config.statusFeed.pages[0]?.baseUrl,
      verificationService: `${config.verification.baseUrl} (${config.verification.api})`,
    },
    [
      config.graphiql ? `GraphQL and GraphiQL at ${url}` : `GraphQL at ${url} (GraphiQL off)`,
      `introspection ${config.limits.introspection ? 'on' : 'off'}`,
      `metrics at ${metricsUrl}`,
      config.tracing ? `traces to ${config.tracing.tracesUrl}` : 'tracing off',
      ...(config.redis ? [`state shared through Redis at ${config.redis.loggedUrl}`] : []),
    ].join('; '),
  );
  logger.flush();

  let stopping = false;
  async function shutdown(signal: string) {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, graceMs: config.server.shutdownGraceMs }, 'shutting down');
    gateway.quiesce();
    await api.drain(config.server.shutdownGraceMs);
    // The metrics port stays up while the API drains, so that the drain itself can be scraped.
    await metricsServer?.drain(0);
    await gateway.close();
    logger.info('stopped');
    await flushLogger(logger);
    process.exit(0);
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // STATUS_PAGES_FILE is read again when it changes; SIGHUP reads it now, where a change is not seen
  // (a file system that does not report changes: NFS, some bind mounts).
  process.on('SIGHUP', () => {
    if (!stopping) gateway.reloadStatusPages();
  });
  // A worker whose primary is gone (killed, crashed) drains and exits: nobody would replace it.
  if (primary) process.on('disconnect', () => void shutdown('primary gone'));
}

/** Why listening on `port` failed, in the terms of the variable that set it; none if unknown. */
function listenProblem(
  error: NodeJS.ErrnoException,
  variable: string,
  port: number,
  host: string | undefined,
): string | undefined {
  switch (error.code) {
    case 'EADDRINUSE':
      return `${variable} ${port} is in use by another process: stop it, or set ${variable} to a free port`;
    case 'EACCES':
      return `${variable} ${port} needs privileges this process lacks: set ${variable} to a port above 1023`;
    case 'EADDRNOTAVAIL':
      return `HOST ${host} is not an address of this machine: set HOST to one of its addresses, or unset it to listen on all`;
    default:
      return undefined;
  }
}
