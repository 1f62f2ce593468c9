/** The paths the gateway serves: the only values a `route` takes in metrics and span names. */
const ROUTES = new Set(['/graphql', '/health', '/readiness', '/metrics', '/status']);

/** Paths that orchestrators and scrapers poll: not traced, they would drown the traces. */
const PROBES = new Set(['/health', '/readiness', '/metrics']);

/**
 * The route of a request path (with or without its query): the path when the gateway serves it,
 * `other` for anything else a client asks for, so that no client can add a series or a span name.
 */
export function routeOf(path: string | undefined): string {
  if (path === undefined) return 'other';
  const query = path.indexOf('?');
  const bare = query === -1 ? path : path.slice(0, query);
  if (ROUTES.has(bare)) return bare;
  // The status board's page and files are one route.
  return bare.startsWith('/status/') ? '/status' : 'other';
}

/** Whether a route is a health probe or a scrape. */
export const isProbe = (route: string): boolean => PROBES.has(route);
