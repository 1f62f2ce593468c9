import { getHeapStatistics } from 'node:v8';
import { createYoga, type GraphiQLOptions } from 'graphql-yoga';
import type { Logger } from 'pino';
import { ClusterChangeBus } from './cluster/cluster-change-bus.js';
import { ClusterSnapshotStore } from './cluster/cluster-snapshot-store.js';
import type { PrimaryLink } from './cluster/primary-link.js';
import { serveReplicaMetrics } from './cluster/worker-metrics.js';
import { describeProblem, readPagesFile } from './config/status-feed.js';
import { watchFile } from './config/watch-file.js';
import type { Config } from './config.js';
import type { ChangeBus } from './core/status/change-bus.js';
import { InMemoryChangeBus } from './core/status/in-memory-change-bus.js';
import { maskError } from './errors/mask-error.js';
import { createAnswers } from './http/answers.js';
import { createCachedGraphQL } from './http/cached-graphql.js';
import { clientAddressOf } from './http/client-address.js';
import { createCors } from './http/cors.js';
import { createEventStreams } from './http/event-streams.js';
import { createFrontDoor } from './http/front-door.js';
import type { GatewayServerContext } from './http/gateway-yoga.js';
import { createGraphiQLPage } from './http/graphiql-page.js';
import { PAGE_TREE_QUERY } from './http/page-tree-query.js';
import { requestIdOf } from './http/request-id.js';
import { createRequestLog } from './http/request-log.js';
import { ResponseCache } from './http/response-cache/store.js';
import { createRoutes } from './http/routes.js';
import { WebhookRefetches } from './http/webhook-refetches.js';
import { createStatuspageWebhooks } from './http/webhooks.js';
import { createWebSocketTransport } from './http/websocket-transport.js';
import { GatewayMetrics } from './metrics/metrics.js';
import { createMetricsListener } from './metrics/metrics-listener.js';
import { currentRequestScope } from './observability/request-scope.js';
import { PATHS } from './observability/route.js';
import { createTracing } from './observability/tracing.js';
import { toYogaLogger } from './observability/yoga-logger.js';
import { DEFAULT_MANIFEST, readManifest, withDocuments } from './persisted-documents/manifest.js';
import { ParserCache } from './plugins/parser-cache.js';
import { useBodyLimit } from './plugins/use-body-limit.js';
import { useCsrfPrevention } from './plugins/use-csrf-prevention.js';
import { useFieldBudget } from './plugins/use-field-budget.js';
import { useGetParams } from './plugins/use-get-params.js';
import { useGraphiQLOffNotice } from './plugins/use-graphiql-off-notice.js';
import { useMetrics } from './plugins/use-metrics.js';
import { usePageBudget } from './plugins/use-page-budget.js';
import { usePartialErrors } from './plugins/use-partial-errors.js';
import { usePersistedDocuments } from './plugins/use-persisted-documents.js';
import { useQueryLimits } from './plugins/use-query-limits.js';
import { useReadiness } from './plugins/use-readiness.js';
import { useRequestLog } from './plugins/use-request-log.js';
import { readStatusBoardDocument, useStatusBoard } from './plugins/use-status-board.js';
import { useSubscriptionAbort } from './plugins/use-subscription-abort.js';
import { useTracing } from './plugins/use-tracing.js';
import { useVariableErrors } from './plugins/use-variable-errors.js';
import { useVerificationSession } from './plugins/use-verification-session.js';
import { RedisConnection } from './redis/redis-connection.js';
import { createContext, type GatewayContext } from './schema/context.js';
import { schema } from './schema/index.js';
import { uploadMutationsOf } from './schema/verification-sources.js';
import { Admission } from './subscriptions/admission.js';
import { ChangeLog } from './subscriptions/change-log.js';
import { SubscriptionHub } from './subscriptions/hub.js';
import { RedisSnapshotStore } from './upstreams/redis-snapshot-store.js';
import { RedisChangeBus } from './upstreams/status-feed/redis-change-bus.js';
import { StatusPages } from './upstreams/status-feed/status-pages.js';
import { type ClientQuota, InMemoryClientQuota } from './upstreams/verification/client-quota.js';
import { configuredChainsOf } from './upstreams/verification/configured-chains.js';
import { RedisClientQuota } from './upstreams/verification/redis-client-quota.js';
import { createVerificationService } from './upstreams/verification/verification-service.js';

const GRAPHQL_ENDPOINT = PATHS.graphql;

/** What one log line of a reload lists at most: problems, and the slugs of each kind of change. */
const MAX_LOGGED_ITEMS = 100;

const GRAPHIQL_OPTIONS: GraphiQLOptions = {
  title: 'Ledger status gateway',
  defaultQuery: PAGE_TREE_QUERY,
};

/**
 * GraphiQL's page, for Yoga and the front door alike. The bundled GraphiQL needs no CDN, so it
 * works offline and under a strict CSP. It is loaded on first use: the bundle costs about 50 MB of
 * memory, and production usually turns it off.
 */
const renderGraphiQL = async (options: GraphiQLOptions) =>
  (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options);

export type Gateway = ReturnType<typeof createGateway>;

export interface GatewayOptions {
  readonly logger: Logger;
  /**
   * This process is one of `GATEWAY_WORKERS` workers of a replica (`main.ts`): without
   * `REDIS_URL` it shares snapshots and change events with the others through the primary, and
   * `/metrics` is the replica's.
   * @default undefined (the replica's only process)
   */
  readonly primary?: PrimaryLink | undefined;
}

/**
 * The composition root: builds the upstream clients, the schema's context, Yoga with its plugins
 * and the front door from the configuration. It never listens: `main.ts` does.
 */
export function createGateway(config: Config, { logger, primary }: GatewayOptions) {
  const metrics = new GatewayMetrics();
  if (primary) serveReplicaMetrics(primary, metrics);
  // Off unless an OTLP endpoint is configured: then nothing on the request path touches tracing.
  const tracing = config.tracing && createTracing({ ...config.tracing, logger });
  // With REDIS_URL the replicas (and their workers) share snapshots, allowances and change events;
  // without it a replica's workers share snapshots and events through their primary; while
  // neither can be reached, each process works alone in memory.
  const redis =
    config.redis &&
    new RedisConnection({
      ...config.redis,
      logger,
      onStateChange: (state) => metrics.redisState(state),
    });
  if (redis) metrics.redisState(redis.state);
  const redisSnapshots = redis && new RedisSnapshotStore({ redis });
  const clusterSnapshots =
    !redis && primary ? new ClusterSnapshotStore({ link: primary }) : undefined;
  const sharedSnapshots = redisSnapshots || clusterSnapshots;
  const changes: ChangeBus =
    redis && redisSnapshots
      ? new RedisChangeBus({ redis, snapshots: redisSnapshots, logger })
      : primary && clusterSnapshots
        ? new ClusterChangeBus({ link: primary, snapshots: clusterSnapshots, logger })
        : new InMemoryChangeBus({ logger });
  const statusPages = new StatusPages({
    config: config.statusFeed,
    feed: { ...config.statusFeed, logger, tracing, sharedSnapshots, changes },
    observer: metrics,
    onCacheEvent: (endpoint, event) => metrics.cacheRead(endpoint, event),
    logger,
  });
  const subscriptions = new SubscriptionHub({
    bus: changes,
    admission: new Admission({ limits: config.subscriptions, pages: statusPages, logger, metrics }),
    log: new ChangeLog({ residentSince: (slug) => statusPages.residentSince(slug) }),
    snapshotAt: (slug) =>
      statusPages.has(slug)
        ? statusPages.get(slug).feed.lastSummary()?.fetchedAt.getTime()
        : undefined,
    backlog: config.subscriptions.backlog,
    metrics,
  });
  /**
   * Reads `STATUS_PAGES_FILE` again and serves its pages (`StatusPages.reconfigure`), ending the
   * subscriptions of the pages it removed or whose feed it changed; a file with problems changes
   * nothing, and each problem is logged with its path. Returns whether the pages were reloaded.
   */
  const reloadStatusPages = (trigger: 'change' | 'SIGHUP'): boolean => {
    const file = config.statusFeed.pagesFile;
    if (file === undefined) {
      logger.info({ trigger }, 'no STATUS_PAGES_FILE to read again: the one status page stays');
      return false;
    }
    const { pages, problems } = readPagesFile(file);
    if (problems) {
      logger.warn(
        {
          file,
          trigger,
          problems: problems.slice(0, MAX_LOGGED_ITEMS).map(describeProblem),
          problemCount: problems.length,
        },
        'STATUS_PAGES_FILE has problems: the status pages stay as they were',
      );
      return false;
    }
    const change = statusPages.reconfigure(pages);
    const ended =
      subscriptions.endFollowing(change.removed, 'page-removed') +
      subscriptions.endFollowing(change.changed, 'page-changed');
    const listed = (slugs: readonly string[]) => slugs.slice(0, MAX_LOGGED_ITEMS);
    logger.info(
      {
        file,
        trigger,
        pages: pages.length,
        added: change.added.length,
        removed: change.removed.length,
        changed: change.changed.length,
        updated: change.updated.length,
        subscriptionsEnded: ended,
        slugs: {
          added: listed(change.added),
          removed: listed(change.removed),
          changed: listed(change.changed),
          updated: listed(change.updated),
        },
      },
      'status pages reloaded',
    );
    return true;
  };
  const pagesFile = config.statusFeed.pagesFile;
  const pagesWatch =
    pagesFile !== undefined
      ? watchFile(pagesFile, () => reloadStatusPages('change'), {
          onError: (error) =>
            logger.warn(
              { err: error, file: pagesFile },
              'STATUS_PAGES_FILE is no longer watched for changes: SIGHUP reads it again',
            ),
        })
      : undefined;
  const verification = createVerificationService({
    ...config.verification,
    // The budget of watched jobs' polls is the replica's: each worker polls within its share.
    watch: {
      ...config.verification.watch,
      maxPollsPerSecond: Math.max(
        1,
        Math.floor(config.verification.watch.maxPollsPerSecond / config.server.workers),
      ),
    },
    logger,
    observer: metrics,
    tracing,
    redis,
    configuredChains: () => configuredChainsOf(statusPages.configs),
  });

  const clientQuota: ClientQuota = redis
    ? new RedisClientQuota({ ...config.verification.clientQuota, redis })
    : new InMemoryClientQuota(config.verification.clientQuota);
  let draining = false;

  const log = createRequestLog(logger, config.logRequests);
  const cors = createCors(config.cors);
  const answers = createAnswers({ log, metrics, logger, cors });
  const verificationSession = useVerificationSession({
    path: GRAPHQL_ENDPOINT,
    secure: config.verification.sessionCookieSecure,
  });

  /**
   * Large uploads whose verification was taken from the client's allowance before their body was
   * read: their resolver does not take it again.
   */
  const paidUploads = new WeakSet<Request>();
  /** The end of the subscriptions Yoga serves itself (not the hub's topics). */
  const subscriptionAbort = useSubscriptionAbort();

  const yoga = createYoga<GatewayServerContext, GatewayContext>({
    schema,
    context: ({ request, req, cacheability, topic }) => {
      const clientAddress = clientAddressOf(req, config.server.trustedProxies);
      return createContext({
        requestId:
          currentRequestScope()?.requestId ?? requestIdOf(request.headers.get('x-request-id')),
        statusPages,
        verification,
        verificationSession: verificationSession.sessionFor(request),
        cacheability,
        maxEntityRepresentations: config.limits.maxEntityRepresentations,
        maxPagesPerOperation: config.limits.maxPagesPerOperation,
        overviewDeadlineMs: config.statusFeed.overviewDeadlineMs,
        clientAddress,
        clientQuota,
        verificationsTaken: paidUploads.has(request) ? 1 : 0,
        subscriptions,
        topic,
        subscriber: {
          transport: 'http',
          clientAddress,
          ...(topic ? {} : { signal: subscriptionAbort.signalOf(request) }),
        },
      });
    },
    // Yoga's own keeps 1,024 documents whatever their size, and its errors' stacks: `ParserCache`.
    parserAndValidationCache: false,
    plugins: [
      subscriptionAbort,
      ...(tracing ? [useTracing(tracing)] : []),
      useRequestLog(),
      // Before the body limit: a cross-site upload is refused before it takes the client's
      // verification allowance, or any room for bodies.
      useCsrfPrevention(),
      useBodyLimit<GatewayServerContext>({
        maxBytes: config.limits.maxBodyBytes,
        json: config.limits.json,
        heapBytes: Math.floor(config.limits.bodiesHeapShare * getHeapStatistics().heap_size_limit),
        // Standard JSON inputs run to megabytes: their mutations alone may send that much.
        uploads: {
          maxBytes: config.limits.maxBodyBytes + config.verification.maxSourceBytes,
          maxConcurrent: config.verification.maxConcurrentUploads,
          ...uploadMutationsOf(schema),
          // Before the body is read: a client past its allowance costs the gateway no parse.
          beforeRead: async (request, { req }) => {
            await clientQuota.take(clientAddressOf(req, config.server.trustedProxies));
            paidUploads.add(request);
          },
        },
      }),
      useGetParams(config.limits.json),
      usePersistedDocuments({
        manifest: withDocuments(
          readManifest(config.persistedDocuments.file ?? DEFAULT_MANIFEST),
          config.statusBoard ? [readStatusBoardDocument()] : [],
        ),
        only: config.persistedDocuments.only,
      }),
      useReadiness({
        // One page is the gateway's feed, reported as before; of several, none is read for a probe.
        statusFeed: () =>
          statusPages.configs.length === 1
            ? statusPages.get(statusPages.defaultSlug).feed
            : undefined,
        isDraining: () => draining,
        redis,
      }),
      useMetrics({ metrics, serveEndpoint: config.metricsPort === undefined }),
      ...useQueryLimits(config.limits),
      useFieldBudget(config.limits),
      useVariableErrors(),
      usePageBudget({ pages: statusPages, maxPages: config.limits.maxPagesPerOperation }),
      verificationSession,
      usePartialErrors(),
      ...(config.graphiql ? [] : [useGraphiQLOffNotice({ endpoint: GRAPHQL_ENDPOINT })]),
      ...(config.statusBoard
        ? [useStatusBoard({ maxPagesPerOperation: config.limits.maxPagesPerOperation })]
        : []),
      // Last, where Yoga puts its own: it keeps what the plugins above made of a parse.
      new ParserCache().plugin,
    ],
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    healthCheckEndpoint: PATHS.health,
    // GraphQL over HTTP's persisted documents (`usePersistedDocuments`).
    extraParamNames: ['documentId'],
    landingPage: false,
    logging: toYogaLogger(logger),
    maskedErrors: { maskError, isDev: config.exposeErrorDetails },
    // The front door answers preflights and gives every answer its CORS headers (`Answers`).
    cors: false,
    renderGraphiQL,
    graphiql: config.graphiql && GRAPHIQL_OPTIONS,
  });

  const cachedGraphQL = createCachedGraphQL({
    yoga,
    store: new ResponseCache(),
    currencyOf: statusPages.currencyOf,
    metrics,
    answers,
    freshness: { ttlMs: config.statusFeed.cacheTtlMs, maxStaleMs: config.statusFeed.maxStaleMs },
  });
  const eventStreams = createEventStreams({
    hub: subscriptions,
    yoga,
    trustedProxies: config.server.trustedProxies,
    maxBufferedBytes: config.subscriptions.maxBufferedBytes,
    json: config.limits.json,
    answers,
  });
  const graphiql = config.graphiql
    ? createGraphiQLPage({ render: () => renderGraphiQL(GRAPHIQL_OPTIONS), answers })
    : undefined;

  // A page's webhook refetches it at once, at most once a second per page, through its caches.
  const webhookRefetches = new WebhookRefetches({
    refetch: (slug) => statusPages.refetch(slug),
    logger,
  });
  const webhooks = createStatuspageWebhooks({
    pages: statusPages,
    refetches: webhookRefetches,
    answers,
    maxBodyBytes: config.limits.maxBodyBytes,
  });

  const websockets = createWebSocketTransport({
    yoga,
    path: GRAPHQL_ENDPOINT,
    keepAliveMs: config.subscriptions.keepAliveMs,
    maxPayloadBytes: config.limits.maxBodyBytes,
    json: config.limits.json,
    maxOperations: config.subscriptions.maxPerConnection,
    maxSockets: config.websockets.maxTotal,
    maxSocketsPerClient: config.websockets.maxPerClient,
    trustedProxies: config.server.trustedProxies,
    idleTimeoutMs: config.websockets.idleTimeoutMs,
    maxBufferedBytes: config.websockets.maxBufferedBytes,
    maxTotalBufferedBytes: config.websockets.maxTotalBufferedBytes,
    allowedOrigins: config.cors?.origins ?? [],
    hub: subscriptions,
    logger,
  });
  const routes = createRoutes({
    yoga,
    cachedGraphQL,
    eventStreams,
    graphiql,
    webhooks,
    websockets,
    answers,
  });
  let socketsClosed: Promise<void> | undefined;
  /**
   * The first step of shutting down: `/readiness` answers 503 from now on, and the waits that
   * would hold an answer back end (APIv2 verifications polling their job answer
   * `VerificationPending` with the job id at once), so that requests in flight finish promptly
   * while the server drains. Every subscription completes (SSE streams end, graphql-ws sends
   * `complete`), and WebSockets then close with 1001 (going away).
   */
  const quiesce = () => {
    draining = true;
    verification.close();
    subscriptions.endAll();
    socketsClosed ??= websockets.close();
  };

  return {
    /** The node:http listener: the front door, which serves every route (`http/routes.ts`). */
    listener: createFrontDoor({ routes: routes.requests, answers, tracing }),
    /** With `METRICS_PORT`, `/metrics` on a port of its own (the API port then answers it 404). */
    metricsListener: config.metricsPort === undefined ? undefined : createMetricsListener(metrics),
    /** The HTTP server's `upgrade` listener: graphql-ws WebSockets on the GraphQL endpoint. */
    upgrade: routes.upgrade.serve,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    quiesce,
    /**
     * Reads `STATUS_PAGES_FILE` again now (`main.ts` on SIGHUP; a change of the file does it by
     * itself): whether its pages are served from now on (false when it has problems).
     */
    reloadStatusPages: () => reloadStatusPages('SIGHUP'),
    /** Stops the background work and completes open streams; close the HTTP server first. */
    close: async () => {
      pagesWatch?.close();
      quiesce();
      subscriptions.close();
      webhookRefetches.close();
      statusPages.close();
      await socketsClosed;
      await yoga.dispose();
      await changes.close();
      await redis?.close();
      log.close();
      // Last, so that the spans of requests finished while draining are exported too.
      await tracing?.close();
    },
  };
}
