import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { GatewayMetrics } from '../metrics.js';
import { executedOperation } from './executed-operation.js';

/** An incoming id is reused only if it cannot smuggle anything into logs or headers. */
const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * One structured log line per HTTP request, with a request id: the caller's `x-request-id` when it
 * sends a sane one, a new UUID otherwise. The id is echoed in the response and sent upstream. The
 * line holds method, path, status, duration and operation name; never the query string, the body
 * or headers, which may carry secrets.
 */
export function useRequestLog({
  logger,
  metrics,
}: {
  logger: Logger;
  metrics: GatewayMetrics;
}): Plugin & { requestIdFor(request: Request): string } {
  const requests = new WeakMap<Request, { id: string; started: number; operation?: string }>();

  const entryFor = (request: Request) => {
    let entry = requests.get(request);
    if (!entry) {
      const incoming = request.headers.get('x-request-id');
      const id = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
      entry = { id, started: performance.now() };
      requests.set(request, entry);
    }
    return entry;
  };

  return {
    requestIdFor: (request) => entryFor(request).id,
    onRequest({ request }) {
      entryFor(request);
    },
    onExecute({ args }) {
      const { request } = args.contextValue as { request: Request };
      const { name } = executedOperation(args.document, args.operationName);
      if (name) entryFor(request).operation = name;
    },
    onResponse({ request, response }) {
      const entry = entryFor(request);
      response.headers.set('x-request-id', entry.id);
      const path = new URL(request.url).pathname;
      metrics.httpRequest(path.slice(0, 64), response.status);
      logger.info(
        {
          requestId: entry.id,
          method: request.method,
          path,
          status: response.status,
          ms: Math.round((performance.now() - entry.started) * 10) / 10,
          ...(entry.operation ? { operation: entry.operation } : {}),
        },
        'request',
      );
    },
  };
}
