import type { Plugin } from 'graphql-yoga';
import type { RequestLog } from '../http/request-log.js';
import { executedOperation } from '../observability/executed-operation.js';
import { currentRequestScope, noteErrorCode } from '../observability/request-scope.js';
import { errorCodesOf } from '../observability/result-errors.js';

/**
 * One structured log line per HTTP request Yoga answers, with the request's id (opened by the front
 * door, see `RequestScope`) echoed in the response as `x-request-id`. The line is `RequestLog`'s, the
 * same the response cache writes for its hits; it names the operation and, when the answer carries
 * errors, the first one's code.
 */
export function useRequestLog(log: RequestLog): Plugin {
  return {
    onExecute({ args }) {
      const scope = currentRequestScope();
      const { name } = executedOperation(args.document, args.operationName);
      if (scope && name) scope.operation = name;
    },
    onResultProcess({ result }) {
      const [code] = errorCodesOf(result);
      if (code !== undefined) noteErrorCode(code);
    },
    onResponse({ request, response }) {
      const scope = currentRequestScope();
      if (!scope) return;
      response.headers.set('x-request-id', scope.requestId);
      log.answered(scope, request.method, new URL(request.url).pathname, response.status);
    },
  };
}
