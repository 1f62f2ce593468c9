import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import { createContext, type GatewayContext } from './context.js';
import { maskError } from './mask-error.js';
import { PAGE_TREE_QUERY } from './page-tree-query.js';
import { usePartialErrors } from './plugins/use-partial-errors.js';
import { useVerificationSession } from './plugins/use-verification-session.js';
import { schema } from './schema/index.js';
import { createStatusFeed } from './upstreams/status-feed/status-feed.js';
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
   * Retries of an upstream GET after a network error or a 5xx.
   * @default 2
   */
  readonly upstreamRetries?: number;
  /**
   * Delay before the first retry; each further retry doubles it.
   * @default 300
   */
  readonly upstreamRetryDelayMs?: number;
  /**
   * Mark the verification session cookie `Secure`, so browsers send it over HTTPS only.
   * @default false
   */
  readonly sessionCookieSecure?: boolean;
  /**
   * How long the verification service's chain list is trusted before it is fetched again.
   * @default 3600000
   */
  readonly verifyChainsTtlMs?: number;
  /**
   * Show internal error details to clients. Only for local development.
   * @default false
   */
  readonly development?: boolean;
}

export type Gateway = YogaServerInstance<Record<string, never>, GatewayContext>;

/** Builds the gateway's request handler. It never listens: `index.ts` does. */
export function createGateway(options: GatewayOptions): Gateway {
  const { logger } = options;
  const upstream = {
    timeoutMs: options.upstreamTimeoutMs ?? 5_000,
    retries: options.upstreamRetries ?? 2,
    retryDelayMs: options.upstreamRetryDelayMs ?? 300,
  };
  const statusFeed = createStatusFeed({
    ...upstream,
    baseUrl: options.statusBaseUrl,
    cacheTtlMs: options.statusCacheTtlMs ?? 10_000,
    maxStaleMs: options.statusMaxStaleMs ?? 300_000,
    logger,
  });

  const verification = createVerificationService({
    ...upstream,
    baseUrl: options.verifyBaseUrl,
    ...(options.verifyChainsTtlMs === undefined ? {} : { chainsTtlMs: options.verifyChainsTtlMs }),
    logger,
  });

  const graphqlEndpoint = '/graphql';
  const verificationSession = useVerificationSession({
    path: graphqlEndpoint,
    secure: options.sessionCookieSecure ?? false,
  });

  return createYoga<Record<string, never>, GatewayContext>({
    schema,
    context: ({ request }) =>
      createContext({
        statusFeed,
        verification,
        verificationSession: verificationSession.sessionFor(request),
      }),
    plugins: [verificationSession, usePartialErrors()],
    graphqlEndpoint,
    landingPage: false,
    logging: toYogaLogger(logger),
    maskedErrors: {
      maskError,
      isDev: options.development ?? false,
    },
    // The bundled GraphiQL needs no CDN, so it works offline and under a strict CSP.
    renderGraphiQL,
    graphiql: {
      title: 'Ledger status gateway',
      defaultQuery: PAGE_TREE_QUERY,
    },
  });
}
