import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RequestScope, runInRequestScope } from '../observability/request-scope.js';
import { PATHS, STATUSPAGE_WEBHOOKS } from '../observability/route.js';
import type { Answers } from './answers.js';
import type { CachedGraphQL } from './cached-graphql.js';
import type { EventStreams } from './event-streams.js';
import { askYoga, type GatewayYoga } from './gateway-yoga.js';
import type { GraphiQLPage } from './graphiql-page.js';
import { readSmallBody } from './read-small-body.js';
import type { StatuspageWebhooks } from './webhooks.js';

/** What serves a request, in the scope the front door opened for it. */
export type Handler = (req: IncomingMessage, res: ServerResponse, scope: RequestScope) => void;

/** One route: what it answers, said for people, and the code that matches and serves it. */
export interface Route {
  /** The methods it answers, as a client writes them (`*`: any). */
  readonly method: string;
  /** Its path, as docs name it (`<slug>`: any value there; `*`: any path). */
  readonly path: string;
  /** Which requests of that method and path, and what answers them. */
  readonly serves: string;
  /** Whether this route serves `req`: the first route that matches serves it. */
  readonly matches: (req: IncomingMessage) => boolean;
  readonly serve: Handler;
}

/** The node:http server's `upgrade` listener. */
export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface RoutesOptions {
  readonly yoga: GatewayYoga;
  /** GraphQL requests through the response cache. */
  readonly cachedGraphQL: CachedGraphQL;
  /** Subscriptions over SSE: sinks of the subscription hub. */
  readonly eventStreams: EventStreams;
  /** GraphiQL's page, served from memory; `undefined` when GraphiQL is off (`GRAPHIQL`). */
  readonly graphiql: GraphiQLPage | undefined;
  readonly webhooks: StatuspageWebhooks;
  /** graphql-ws: the WebSocket handshake (`websocket-transport.ts`). */
  readonly websockets: { readonly upgrade: UpgradeListener };
  readonly answers: Answers;
}

/** Bodies above this go straight to Yoga: cacheable operations (and the hub's) are small. */
const LARGEST_CACHED_REQUEST = 16 * 1024;

/**
 * Every route the gateway serves on its port: the requests, in the order the front door tries them
 * (after its own checks: the request scope, a valid `Host`, else 400), and the WebSocket upgrade.
 * This is the one place that says which code answers which request: a new route is a line here.
 * The `/metrics` of `METRICS_PORT` is that port's alone (`metrics/metrics-listener.ts`).
 */
export function createRoutes(options: RoutesOptions): {
  readonly requests: readonly Route[];
  readonly upgrade: Omit<Route, 'matches' | 'serve'> & { readonly serve: UpgradeListener };
} {
  const { yoga, cachedGraphQL, eventStreams, graphiql, webhooks, websockets, answers } = options;
  const graphql = yoga.graphqlEndpoint;
  const graphqlQuery = `${graphql}?`;

  /** A request at the GraphQL endpoint, with or without a query: no string made to know it. */
  const atGraphQL = (url = '') => url === graphql || url.startsWith(graphqlQuery);
  const isGet = (req: IncomingMessage) => req.method === 'GET' && atGraphQL(req.url);
  /** A JSON POST to the endpoint whose declared length is at most `LARGEST_CACHED_REQUEST`. */
  const isSmallJsonPost = (req: IncomingMessage) => {
    if (req.method !== 'POST' || req.url !== graphql) return false;
    const length = Number(req.headers['content-length']);
    return (
      /^application\/json\b/i.test(req.headers['content-type'] ?? '') &&
      length > 0 &&
      length <= LARGEST_CACHED_REQUEST
    );
  };
  /** A `method` request at `path`, with or without a query. */
  const at = (method: string, path: string) => {
    const withQuery = `${path}?`;
    return (req: IncomingMessage) =>
      req.method === method && (req.url === path || req.url?.startsWith(withQuery) === true);
  };

  /** Yoga's pipeline in full, its body streamed from the socket, in the request's scope. */
  const askYogaInScope: Handler = (req, res, scope) =>
    runInRequestScope(scope, () =>
      askYoga(yoga, req, res)
        .then((response) => answers.fetched(req, res, scope, response))
        .catch((error: unknown) => answers.failed(req, res, scope, error)),
    );

  /** An SSE subscriber: a sink of its topic, or, when it cannot be shared, a request of its own. */
  const subscribe = (
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    body?: Buffer,
  ) => eventStreams.serve(req, res, scope, body, () => cachedGraphQL.alone(req, res, scope, body));

  const requests: Route[] = [
    {
      method: '*',
      path: `${STATUSPAGE_WEBHOOKS}<slug>/<token>`,
      serves: "a status page's webhook (webhooks.ts): POST, else 405; the token may be a Bearer",
      matches: webhooks.accepts,
      serve: (req, res, scope) => runInRequestScope(scope, () => webhooks.handle(req, res, scope)),
    },
    {
      method: 'GET',
      path: graphql,
      serves:
        "Accept with text/html: GraphiQL's page (graphiql-page.ts), or with GRAPHIQL off Yoga's " +
        '406 notice (plugins/use-graphiql-off-notice.ts)',
      matches: (req) => isGet(req) && req.headers.accept?.includes('text/html') === true,
      serve: graphiql ? graphiql.serve : askYogaInScope,
    },
    {
      method: 'GET, POST',
      path: graphql,
      serves:
        'Accept: text/event-stream alone (POST: JSON, at most 16 KiB): a subscription over SSE, ' +
        "a sink of the subscription hub's topic (event-streams.ts)",
      matches: (req) => eventStreams.accepts(req) && (isGet(req) || isSmallJsonPost(req)),
      serve: (req, res, scope) => {
        if (req.method === 'GET') subscribe(req, res, scope);
        else readSmallBody(req, res, scope, answers, subscribe);
      },
    },
    {
      method: 'GET, POST',
      path: graphql,
      serves:
        'POST: JSON, at most 16 KiB: a hit of the response cache, else Yoga, its answer kept ' +
        'when it may be (cached-graphql.ts; the store: response-cache/)',
      matches: (req) => isGet(req) || isSmallJsonPost(req),
      // The scope is kept in a variable, not entered: a hit needs nothing else, and entering
      // AsyncLocalStorage is a measurable share of a hit. A miss enters it before Yoga runs.
      serve: (req, res, scope) => {
        if (req.method === 'GET') cachedGraphQL.get(req, res, scope);
        else readSmallBody(req, res, scope, answers, cachedGraphQL.post);
      },
    },
    {
      method: 'OPTIONS',
      path: '*',
      serves: "a CORS preflight: 204 with the origin's CORS headers (answers.ts); CORS off, Yoga",
      matches: (req) => req.method === 'OPTIONS',
      serve: (req, res, scope) => {
        if (!answers.preflight(req, res, scope)) askYogaInScope(req, res, scope);
      },
    },
    {
      method: '*',
      path: PATHS.health,
      serves: "alive: Yoga's health check (which answers any path that ends in it)",
      matches: (req) => req.url === PATHS.health,
      serve: askYogaInScope,
    },
    {
      method: 'GET',
      path: PATHS.readiness,
      serves: 'ready, and the state of the feed and Redis: Yoga (plugins/use-readiness.ts)',
      matches: at('GET', PATHS.readiness),
      serve: askYogaInScope,
    },
    {
      method: 'GET',
      path: PATHS.metrics,
      serves: 'Prometheus: Yoga (plugins/use-metrics.ts); 404 with METRICS_PORT',
      matches: at('GET', PATHS.metrics),
      serve: askYogaInScope,
    },
    {
      method: 'GET, HEAD',
      path: `${PATHS.statusBoard}, ${PATHS.statusBoard}/<file>`,
      serves: 'the status board, with STATUS_BOARD: Yoga (plugins/use-status-board.ts)',
      matches: (req) =>
        (req.method === 'GET' || req.method === 'HEAD') &&
        req.url?.startsWith(PATHS.statusBoard) === true,
      serve: askYogaInScope,
    },
    {
      method: '*',
      path: '*',
      serves:
        'everything else: Yoga (POST /graphql with a large or non-JSON body, multipart, ' +
        'Accept: text/event-stream with more; 404 at any other path)',
      matches: () => true,
      serve: askYogaInScope,
    },
  ];

  return {
    requests,
    upgrade: {
      method: 'GET',
      path: graphql,
      serves:
        'Upgrade: websocket: graphql-ws (websocket-transport.ts, websocket-protocol.ts); 404 ' +
        'at any other path, 503 while draining (server.ts)',
      serve: websockets.upgrade,
    },
  };
}

export type Routes = ReturnType<typeof createRoutes>;
