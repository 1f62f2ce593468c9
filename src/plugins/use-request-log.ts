import type { Plugin } from 'graphql-yoga';
import { requestIdOf } from '../http/request-id.js';
import type { RequestLog } from '../http/request-log.js';
import { executedOperation } from '../observability/executed-operation.js';

/**
 * One structured log line per HTTP request Yoga answers, with a request id (see `requestIdOf`),
 * echoed in the response as `x-request-id` and sent upstream. The line is `RequestLog`'s, the same
 * the response cache writes for its hits.
 */
export function useRequestLog(
  log: RequestLog,
): Plugin & { requestIdFor(request: Request): string } {
  const requests = new WeakMap<Request, { id: string; started: number; operation?: string }>();

  const entryFor = (request: Request) => {
    let entry = requests.get(request);
    if (!entry) {
      entry = { id: requestIdOf(request.headers.get('x-request-id')), started: performance.now() };
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
      const { id, started, operation } = entryFor(request);
      response.headers.set('x-request-id', id);
      log({
        requestId: id,
        method: request.method,
        path: new URL(request.url).pathname,
        status: response.status,
        started,
        operation,
      });
    },
  };
}
