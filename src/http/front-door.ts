import type { RequestListener } from 'node:http';
import { type RequestScope, runInRequestScope } from '../observability/request-scope.js';
import { isProbe, routeOf } from '../observability/route.js';
import { callerTraceHeaders, type Tracing } from '../observability/tracing.js';
import type { Answers } from './answers.js';
import { requestIdOf } from './request-id.js';
import type { Route } from './routes.js';

export interface FrontDoorOptions {
  /** Every route of the gateway's port, tried in order (`createRoutes`); the last matches all. */
  readonly routes: readonly Route[];
  readonly answers: Answers;
  readonly tracing: Tracing | undefined;
}

/**
 * The gateway's front door, the node:http listener production serves and the tests call: it opens
 * the request's scope (its id, arrival time and trace, see `RequestScope`), refuses a `Host` no URL
 * can be made of, and hands the request to the first of `routes` that matches it (`routes.ts`, the
 * table of every route). Every answer, whoever makes it, goes out through `Answers`.
 */
export function createFrontDoor(options: FrontDoorOptions): RequestListener {
  const { routes, answers, tracing } = options;
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
    // Routes keep the scope in a variable; those that need it entered (all but a hit) enter it.
    for (let i = 0; i < routes.length; i++) {
      const route = routes[i] as Route;
      if (route.matches(req)) {
        route.serve(req, res, scope);
        return;
      }
    }
  };
}
