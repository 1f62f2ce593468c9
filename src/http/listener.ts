import type { RequestListener } from 'node:http';
import { refusalBody } from '../errors/refusal.js';
import { type RequestScope, runInRequestScope } from '../observability/request-scope.js';
import { callerTraceHeaders, type Tracing } from '../observability/tracing.js';
import type { GatewayYoga } from './gateway-yoga.js';
import { requestIdOf } from './request-id.js';
import type { CachedHandler } from './response-cache/cached-handler.js';
import { isProbe, routeOf } from './route.js';

/**
 * The gateway's front door, the node:http listener production serves and the tests call: it opens
 * the request's scope (its id, arrival time and trace, see `RequestScope`), then a request the
 * response cache accepts goes to it, everything else to Yoga's own node handler, in the scope.
 */
export function createListener(
  yoga: GatewayYoga,
  responseCache: CachedHandler,
  tracing: Tracing | undefined,
): RequestListener {
  // The last Host header found valid: clients send the same one request after request.
  let validHost: string | undefined;
  return (req, res) => {
    const requestId = requestIdOf(req.headers['x-request-id']);
    const scope: RequestScope = { requestId, started: performance.now() };
    if (tracing) {
      const route = routeOf(req.url);
      if (!isProbe(route)) {
        scope.span = tracing.requestSpan(req, res, route);
        scope.span.setAttribute('gateway.request_id', requestId);
      }
    } else if (req.headers.traceparent !== undefined) {
      scope.traceHeaders = callerTraceHeaders(req.headers);
    }
    const host = req.headers.host;
    if (host !== undefined && host !== validHost) {
      if (URL.canParse(`http://${host}/`)) validHost = host;
      else {
        // Yoga's adapter would fail to build the request URL and answer 500 with a stack trace.
        runInRequestScope(scope, () =>
          res
            .writeHead(400, {
              'content-type': 'application/json; charset=utf-8',
              'x-request-id': requestId,
            })
            .end(refusalBody('BAD_REQUEST', 'The Host header is not a valid host.')),
        );
        return;
      }
    }
    // The cache holds the scope itself (a hit needs nothing else, and entering AsyncLocalStorage
    // is a measurable share of a hit) and puts a miss back in it before Yoga runs.
    if (responseCache.accepts(req)) responseCache.handle(req, res, scope);
    else runInRequestScope(scope, () => void yoga(req, res));
  };
}
