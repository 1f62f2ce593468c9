import type { RequestListener } from 'node:http';
import { type RequestScope, runInRequestScope } from '../observability/request-scope.js';
import { isProbe, routeOf } from '../observability/route.js';
import { callerTraceHeaders, type Tracing } from '../observability/tracing.js';
import type { Answers } from './answers.js';
import { askYoga, type GatewayYoga } from './gateway-yoga.js';
import { requestIdOf } from './request-id.js';
import type { CachedHandler } from './response-cache/cached-handler.js';
import type { StatuspageWebhooks } from './webhooks.js';

export interface FrontDoorOptions {
  readonly yoga: GatewayYoga;
  readonly responseCache: CachedHandler;
  /** Status pages' webhooks (`POST /webhooks/statuspage/…`), never Yoga's. */
  readonly webhooks: StatuspageWebhooks;
  readonly answers: Answers;
  readonly tracing: Tracing | undefined;
}

/**
 * The gateway's front door, the node:http listener production serves and the tests call: it opens
 * the request's scope (its id, arrival time and trace, see `RequestScope`), then a status page's
 * webhook goes to `webhooks`, a request the response cache accepts to it, everything else to Yoga,
 * in the scope. Every answer, whoever makes it, goes out through `Answers`.
 */
export function createFrontDoor(options: FrontDoorOptions): RequestListener {
  const { yoga, responseCache, webhooks, answers, tracing } = options;
  // The last Host header found valid: clients send the same one request after request.
  let validHost: string | undefined;
  return (req, res) => {
    const requestId = requestIdOf(req.headers['x-request-id']);
    // Every field from the start: one object shape, its fields in the object, however the request goes.
    const scope: RequestScope = {
      requestId,
      started: performance.now(),
      operation: undefined,
      errorCode: undefined,
      results: undefined,
      span: undefined,
      traceHeaders: undefined,
    };
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
        // No URL can be made of it for Yoga.
        runInRequestScope(scope, () =>
          answers.refuse(
            req,
            res,
            scope,
            400,
            'BAD_REQUEST',
            'The Host header is not a valid host.',
          ),
        );
        return;
      }
    }
    if (webhooks.accepts(req)) {
      runInRequestScope(scope, () => webhooks.handle(req, res, scope));
      return;
    }
    // The cache holds the scope itself (a hit needs nothing else, and entering AsyncLocalStorage
    // is a measurable share of a hit) and puts a miss back in it before Yoga runs.
    if (responseCache.accepts(req)) responseCache.handle(req, res, scope);
    // A preflight is answered by `answers` when CORS is on; everything else goes to Yoga.
    else if (req.method !== 'OPTIONS' || !answers.preflight(req, res, scope)) {
      runInRequestScope(scope, () =>
        askYoga(yoga, req, res)
          .then((response) => answers.fetched(req, res, scope, response))
          .catch((error: unknown) => answers.failed(req, res, scope, error)),
      );
    }
  };
}
