import type { Plugin } from 'graphql-yoga';
import { executedOperation } from '../observability/executed-operation.js';
import { currentRequestScope, noteErrorCode } from '../observability/request-scope.js';
import { errorCodesOf } from '../observability/result-errors.js';

/**
 * Notes in the request's scope what its log line reports of the operation: its name, and the code
 * of the first error its answer carries. The line itself is written by the front door
 * (`Answers`), as it is for every answer, response-cache hits included.
 */
export function useRequestLog(): Plugin {
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
  };
}
