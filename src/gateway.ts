import type { RequestListener } from 'node:http';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import { createContext, type GatewayContext } from './context.js';
import { maskError } from './mask-error.js';
import { GatewayMetrics } from './metrics.js';
import { createNodeListener } from './node-listener.js';
import { PAGE_TREE_QUERY } from './page-tree-query.js';
import { useBodyLimit } from './plugins/use-body-limit.js';
import { useCsrfPrevention } from './plugins/use-csrf-prevention.js';
import { useGetParams } from './plugins/use-get-params.js';
import { useMetrics } from './plugins/use-metrics.js';
import { usePartialErrors } from './plugins/use-partial-errors.js';
import { type QueryLimits, useQueryLimits } from './plugins/use-query-limits.js';
import { useReadiness } from './plugins/use-readiness.js';
import { useRequestLog } from './plugins/use-request-log.js';
import { useVerificationSession } from './plugins/use-verification-session.js';
import { ResponseCache } from './response-cache.js';
import { schema } from './schema/index.js';
import { createStatusFeed } from './upstreams/status-feed/status-feed.js';
import type { VerifyApi } from './upstreams/verification/model.js';
import { createVerificationService } from './upstreams/verification/verification-service.js';
import { toYogaLogger } from './yoga-logger.js';

export interface GatewayOptions {
  /** Base URL of the Statuspage v2 feed, ending in `/api/v2`. */
  readonly statusBaseUrl: string;
  /** Base URL of the contract verification service. */
  readonly verifyBaseUrl: string;
  readonly logger: Logger;
  /**
   * How long a fetched status document is served to every request.
   * @default 10000
   */
  readonly statusCacheTtlMs?: number;
  /**
   * How long after its fetch a status document may stand in while the feed fails.
   * @default 300000
   */
  readonly statusMaxStaleMs?: number;
  /**
   * Time allowed for each upstream attempt, and again for reading its body.
   * @default 5000
   */
  readonly upstreamTimeoutMs?: number;
  /**
   * `upstreamTimeoutMs` for the status feed alone.
   * @default upstreamTimeoutMs
   */
  readonly statusTimeoutMs?: number;
  /**
   * `upstreamTimeoutMs` for the verification service alone; verifying can take a while.
   * @default upstreamTimeoutMs
   */
  readonly verifyTimeoutMs?: number;
  /**
   * Retries of an upstream GET after a network error or a 5xx. POSTs are never retried.
   * @default 2
   */
  readonly upstreamRetries?: number;
  /**
   * Delay before the first retry; each further retry doubles it.
   * @default 300
   */
  readonly upstreamRetryDelayMs?: number;
  /**
   * Consecutive failures that open an upstream's circuit.
   * @default 5
   */
  readonly circuitFailureThreshold?: number;
  /**
   * How long an open circuit fails fast before probing the upstream again.
   * @default 30000
   */
  readonly circuitCooldownMs?: number;
  /**
   * Mark the verification session cookie `Secure`, so browsers send it over HTTPS only.
   * @default false
   */
  readonly sessionCookieSecure?: boolean;
  /**
   * The verification service's API: `session` (Sourcify's session API, the seed's) or `v2`
   * (Sourcify APIv2, what live servers speak since sourcify-server 3.10).
   * @default 'session'
   */
  readonly verifyApi?: VerifyApi;
  /**
   * With APIv2, how long `verifyContract` waits for the job before answering `VerificationPending`.
   * @default 20000
   */
  readonly verifyWaitMs?: number;
  /**
   * With APIv2, the first pause between polls of a job; each pause is 1.5 times the last, up to 2 s.
   * @default 250
   */
  readonly verifyPollIntervalMs?: number;
  /**
   * How long the verification service's chain list is trusted before it is fetched again.
   * @default 3600000
   */
  readonly verifyChainsTtlMs?: number;
  /** Bounds on operations, and whether introspection is served (see `QueryLimits`). */
  readonly limits?: QueryLimits;
  /**
   * Largest request body accepted.
   * @default 262144
   */
  readonly maxBodyBytes?: number;
  /**
   * Serve GraphiQL to browsers at the GraphQL endpoint.
   * @default true
   */
  readonly graphiql?: boolean;
  /**
   * Origins allowed to call the gateway from a browser, with credentials (the session cookie).
   * Empty: same-origin only.
   * @default []
   */
  readonly corsOrigins?: readonly string[];
  /**
   * Show internal error details to clients. Only for local development.
   * @default false
   */
  readonly development?: boolean;
}

export interface Gateway {
  /** Answers a Fetch API request through Yoga's full pipeline (tests, in-process callers). */
  readonly fetch: YogaServerInstance<Record<string, never>, GatewayContext>['fetch'];
  /** The node:http listener: the response cache in front of the same pipeline. */
  readonly listener: RequestListener;
  readonly graphqlEndpoint: string;
}

/** Builds the gateway's request handlers. It never listens: `index.ts` does. */
export function createGateway(options: GatewayOptions): Gateway {
  const { logger } = options;
  const metrics = new GatewayMetrics();
  const upstream = {
    retries: options.upstreamRetries ?? 2,
    retryDelayMs: options.upstreamRetryDelayMs ?? 300,
    circuitFailureThreshold: options.circuitFailureThreshold ?? 5,
    circuitCooldownMs: options.circuitCooldownMs ?? 30_000,
    observer: metrics,
    logger,
  };
  const timeoutMs = options.upstreamTimeoutMs ?? 5_000;
  const statusFeed = createStatusFeed({
    ...upstream,
    baseUrl: options.statusBaseUrl,
    timeoutMs: options.statusTimeoutMs ?? timeoutMs,
    cacheTtlMs: options.statusCacheTtlMs ?? 10_000,
    maxStaleMs: options.statusMaxStaleMs ?? 300_000,
    onCacheEvent: (path, event) => metrics.cacheRead(path, event),
  });
  const verification = createVerificationService({
    ...upstream,
    baseUrl: options.verifyBaseUrl,
    timeoutMs: options.verifyTimeoutMs ?? timeoutMs,
    api: options.verifyApi ?? 'session',
    ...(options.verifyWaitMs === undefined ? {} : { waitMs: options.verifyWaitMs }),
    ...(options.verifyPollIntervalMs === undefined
      ? {}
      : { pollIntervalMs: options.verifyPollIntervalMs }),
    ...(options.verifyChainsTtlMs === undefined ? {} : { chainsTtlMs: options.verifyChainsTtlMs }),
  });

  const graphqlEndpoint = '/graphql';
  const requestLog = useRequestLog({ logger, metrics });
  const verificationSession = useVerificationSession({
    path: graphqlEndpoint,
    secure: options.sessionCookieSecure ?? false,
  });
  const corsOrigins = options.corsOrigins ?? [];

  const contexts = new WeakMap<Request, GatewayContext>();
  const yoga = createYoga<Record<string, never>, GatewayContext>({
    schema,
    context: ({ request }) => {
      const context = createContext({
        requestId: requestLog.requestIdFor(request),
        statusFeed,
        verification,
        verificationSession: verificationSession.sessionFor(request),
      });
      contexts.set(request, context);
      return context;
    },
    plugins: [
      requestLog,
      useBodyLimit(options.maxBodyBytes === undefined ? {} : { maxBytes: options.maxBodyBytes }),
      useCsrfPrevention(),
      useGetParams(),
      useReadiness({ statusFeed }),
      useMetrics({ metrics }),
      ...useQueryLimits(options.limits),
      verificationSession,
      usePartialErrors(),
    ],
    graphqlEndpoint,
    landingPage: false,
    logging: toYogaLogger(logger),
    maskedErrors: { maskError, isDev: options.development ?? false },
    cors:
      corsOrigins.length > 0
        ? {
            origin: [...corsOrigins],
            credentials: true,
            methods: ['GET', 'POST'],
            allowedHeaders: ['content-type', 'x-request-id'],
            exposedHeaders: ['x-request-id'],
            maxAge: 600,
          }
        : false,
    // The bundled GraphiQL needs no CDN, so it works offline and under a strict CSP. It is loaded
    // on first use: the bundle costs about 50 MB of memory, and production usually turns it off.
    renderGraphiQL: async (graphiqlOptions) =>
      (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(graphiqlOptions),
    graphiql: (options.graphiql ?? true) && {
      title: 'Ledger status gateway',
      defaultQuery: PAGE_TREE_QUERY,
    },
  });

  return {
    fetch: yoga.fetch,
    graphqlEndpoint,
    listener: createNodeListener({
      yoga,
      responseCache: new ResponseCache({ isCurrent: statusFeed.isCurrent }),
      contextOf: (request) => contexts.get(request),
      metrics,
      logger,
      cors: corsOrigins.length > 0,
    }),
  };
}
