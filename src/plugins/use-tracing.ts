import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { executedOperation } from '../observability/executed-operation.js';
import { currentRequestScope } from '../observability/request-scope.js';
import { errorCodesOf } from '../observability/result-errors.js';
import { failSpan, type Span, type Tracing } from '../observability/tracing.js';

/**
 * Spans for the GraphQL operation of a request, as Hive Gateway's and Yoga's OpenTelemetry plugins
 * draw them: `graphql.operation <name>` under the HTTP request's span, with `graphql.parse`,
 * `graphql.validate` and `graphql.execute` (or `graphql.subscribe`) beneath it. While the operation
 * executes, the request's scope points at the execution span, so that upstream calls hang under it.
 * The operation span carries the operation's name and type and the codes of the errors answered,
 * never the document or its variables.
 */
export function useTracing(tracing: Tracing): Plugin {
  // Keyed by the Fetch request Yoga handles: one operation per request (batching is off).
  const operations = new WeakMap<Request, Span>();

  /** The span of the operation of the request `context` is for. */
  const operationOf = (context: unknown): Span => {
    const { request } = context as { request: Request };
    let span = operations.get(request);
    if (!span) {
      span = tracing.startSpan('graphql.operation');
      operations.set(request, span);
    }
    return span;
  };

  /** Opens the span of one step of the request's operation. */
  const step = (context: unknown, name: string) =>
    tracing.startSpan(name, {}, operationOf(context));

  /**
   * Opens the execution (or subscription) span, names the operation span after what runs, and
   * points the request's scope at the execution until it is done; returns what ends it.
   */
  const beginExecution = (args: ExecutionArgs, kind: 'execute' | 'subscribe') => {
    const operation = operationOf(args.contextValue);
    const { name, type } = executedOperation(args.document, args.operationName);
    operation.updateName(name ? `graphql.operation ${name}` : 'graphql.operation');
    operation.setAttributes({
      'graphql.operation.type': type,
      ...(name ? { 'graphql.operation.name': name } : {}),
    });
    const span = step(args.contextValue, `graphql.${kind}`);
    const scope = currentRequestScope();
    const parent = scope?.span;
    if (scope) scope.span = span;
    return (result: ExecutionResult | AsyncIterable<unknown>) => {
      if (scope) scope.span = parent;
      if (!(Symbol.asyncIterator in result) && (result.errors?.length ?? 0) > 0) {
        failSpan(span, 'the operation answered errors');
      }
      span.end();
    };
  };

  return {
    onParse({ context }) {
      const span = step(context, 'graphql.parse');
      return ({ result }) => {
        if (result instanceof Error) failSpan(span, 'the document does not parse');
        span.end();
      };
    },
    onValidate({ context }) {
      const span = step(context, 'graphql.validate');
      return ({ valid }) => {
        if (!valid) failSpan(span, 'the document is not valid');
        span.end();
      };
    },
    onExecute({ args }) {
      const end = beginExecution(args, 'execute');
      return { onExecuteDone: ({ result }) => end(result) };
    },
    onSubscribe({ args }) {
      const end = beginExecution(args, 'subscribe');
      return { onSubscribeResult: ({ result }) => end(result) };
    },
    onResultProcess({ request, result }) {
      const operation = operations.get(request);
      if (!operation) return;
      operations.delete(request);
      const codes = errorCodesOf(result);
      if (codes.length > 0) {
        operation.setAttributes({
          'graphql.error.count': codes.length,
          'graphql.error.codes': codes,
        });
        failSpan(operation, `${codes.length} error${codes.length === 1 ? '' : 's'}: ${codes[0]}`);
      }
      operation.end();
    },
  };
}
