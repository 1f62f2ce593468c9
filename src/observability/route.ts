/**
 * The paths the gateway serves, by what they are: where each is served (`http/routes.ts`, the
 * plugins that answer them) and what metrics and spans call it take it from here.
 */
export const PATHS = {
  graphql: '/graphql',
  health: '/health',
  readiness: '/readiness',
  metrics: '/metrics',
  /** The status board's page; its files are under it. */
  statusBoard: '/status',
} as const;

/** The only values a `route` takes in metrics and span names, with the webhooks' and `other`. */
const ROUTES = new Set<string>(Object.values(PATHS));
const STATUS_BOARD_FILES = `${PATHS.statusBoard}/`;

/**
 * Where a status page's webhooks are posted: `<prefix><slug>/<token>`, or `<prefix><slug>` with the
 * token in a header. All of them are one route, whatever the slug.
 */
export const STATUSPAGE_WEBHOOKS = '/webhooks/statuspage/';
const STATUSPAGE_WEBHOOKS_ROUTE = '/webhooks/statuspage';

/** What stands for everything past a webhook's slug in a logged path: the token, a secret. */
const REDACTED = '/redacted';

/** Paths that orchestrators and scrapers poll: not traced, they would drown the traces. */
const PROBES = new Set<string>([PATHS.health, PATHS.readiness, PATHS.metrics]);

/**
 * The route of a request path (with or without its query): the path when the gateway serves it,
 * `other` for anything else a client asks for, so that no client can add a series or a span name.
 */
export function routeOf(path: string | undefined): string {
  if (path === undefined) return 'other';
  const bare = requestPath(path);
  if (ROUTES.has(bare)) return bare;
  // The status board's page and files are one route.
  if (bare.startsWith(STATUS_BOARD_FILES)) return PATHS.statusBoard;
  return bare.startsWith(STATUSPAGE_WEBHOOKS) ? STATUSPAGE_WEBHOOKS_ROUTE : 'other';
}

/**
 * A request's path without its query, and without a webhook's token (anything past its slug, in
 * whatever form the URL came): what a log line and a route are made from.
 */
export function requestPath(url = '/'): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const webhook = path.indexOf(STATUSPAGE_WEBHOOKS);
  if (webhook === -1) return path;
  const afterSlug = path.indexOf('/', webhook + STATUSPAGE_WEBHOOKS.length);
  return afterSlug === -1 ? path : `${path.slice(0, afterSlug)}${REDACTED}`;
}

/** Whether a route is a health probe or a scrape. */
export const isProbe = (route: string): boolean => PROBES.has(route);

/**
 * An upstream path as a template: a segment that carries an id, a chain, an address or anything
 * long becomes `:param`, so that `/v2/contract/1/0x…` is one series whatever the client asks for.
 */
export function endpointTemplate(path: string): string {
  return path
    .split('/')
    .map((segment) =>
      segment === '' || /^v\d+$/.test(segment) || (!/\d/.test(segment) && segment.length <= 40)
        ? segment
        : ':param',
    )
    .join('/');
}
