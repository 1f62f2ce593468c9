import { buildExecutionContext, execute } from '@graphql-tools/executor';
import {
  createSourceEventStream,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  getOperationAST,
} from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { GatewayMetrics } from '../metrics/metrics.js';
import type { FieldBudgetContext } from '../schema/plugins/field-budget.js';
import { sharedResult } from '../subscriptions/shared-result.js';
import { settleFieldBudget } from './use-field-budget.js';
import { type PartialErrorsContext, settlePartialErrors } from './use-partial-errors.js';

interface MultiplexedSubscriptionsOptions {
  readonly metrics: Pick<GatewayMetrics, 'subscriptionExecuted'>;
}

/** One event's result for one operation, whoever asked first executing it. */
type Execution = Promise<ExecutionResult>;

/**
 * Subscribers of the same operation share one execution of each event. The subscription registry
 * hands the same event object to every stream that wants it; the first subscriber to read it
 * executes the operation for it, and every other subscriber of the same document, operation name
 * and variables gets that result, already settled (budget and partial errors applied) and frozen,
 * with its JSON text made once (`sharedResult`). A thousand subscribers of one component's status
 * cost one execution per change, not a thousand. What a subscriber gets only for itself (the
 * whole page `statusPageChanged` starts with, the `overflow` that ends a slow one) is an object of
 * its own, so its execution is its own.
 *
 * The subscription field's `subscribe` resolver still runs per subscriber, as do every plugin's
 * `onSubscribe` and `onNext`: limits, per-client caps, logs and metrics are each subscriber's.
 * The status subscriptions read nothing from the context that changes their answer (no session,
 * no client), so the context of whoever executes is as good as any.
 *
 * The results are keyed by the event, weakly: they go when the event does, once every stream
 * has read it. Nothing keeps an event's result once it is handed on.
 */
export function useMultiplexedSubscriptions(options: MultiplexedSubscriptionsOptions): Plugin {
  const executions = new WeakMap<object, Map<string, Execution>>();
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextDocumentId = 0;

  const subscribe = async (
    args: ExecutionArgs,
    original: (args: ExecutionArgs) => unknown,
  ): Promise<unknown> => {
    // The document's errors (no such operation, bad variables) as the executor reports them.
    if (!('schema' in buildExecutionContext(args))) return original(args);
    const source = await createSourceEventStream(args);
    if (!isAsyncIterable(source)) return source;
    const id = documentIds.get(args.document) ?? nextDocumentId++;
    documentIds.set(args.document, id);
    const key = `${id}\n${args.operationName ?? ''}\n${JSON.stringify(args.variableValues ?? {})}`;
    const field = rootFieldOf(args);
    const context = args.contextValue as FieldBudgetContext & PartialErrorsContext;
    const run = async (event: unknown): Promise<ExecutionResult> => {
      options.metrics.subscriptionExecuted(field);
      const result = (await execute({ ...args, rootValue: event })) as ExecutionResult;
      return sharedResult(settlePartialErrors(context, settleFieldBudget(context, result)));
    };
    return eventsOf(source[Symbol.asyncIterator](), (event) => {
      if (typeof event !== 'object' || event === null) return run(event);
      const byOperation = executions.get(event) ?? new Map<string, Execution>();
      executions.set(event, byOperation);
      const execution = byOperation.get(key) ?? run(event);
      byOperation.set(key, execution);
      return execution;
    });
  };

  return {
    onSubscribe({ setSubscribeFn, subscribeFn }) {
      setSubscribeFn((args) => subscribe(args as ExecutionArgs, subscribeFn as never) as never);
    },
  };
}

/** The root field's name, for the metric (a subscription selects exactly one). */
function rootFieldOf(args: ExecutionArgs): string {
  const selection = getOperationAST(args.document, args.operationName)?.selectionSet.selections[0];
  return selection?.kind === 'Field' ? selection.name.value : 'other';
}

/**
 * The results of a source stream's events. Unlike the executor's own mapping, it holds no result
 * between reads: an idle subscriber keeps nothing it was sent.
 */
function eventsOf(
  source: AsyncIterator<unknown>,
  executeEvent: (event: unknown) => Execution,
): AsyncIterableIterator<ExecutionResult> {
  const close = () => source.return?.();
  return {
    async next() {
      const item = await source.next();
      if (item.done) return { value: undefined, done: true };
      try {
        return { value: await executeEvent(item.value), done: false };
      } catch (error) {
        await close();
        throw error instanceof GraphQLError ? error : new GraphQLError(String(error));
      }
    },
    async return() {
      await close();
      return { value: undefined, done: true };
    },
    async throw(error: unknown) {
      await close();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
