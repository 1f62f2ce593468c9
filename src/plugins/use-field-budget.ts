import { type ExecutionResult, GraphQLError, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { wrapResolvers } from '../schema/wrap-resolvers.js';

/** What one operation may still spend, made fresh for each operation. */
interface Budget {
  fields: number;
  bytes: number;
  /** What it started with. */
  readonly limits: FieldBudgetOptions;
  /** Set when the first field resolves: a subscription's event starts its clock when it is sent. */
  deadline: number | undefined;
  exceeded: GraphQLError | undefined;
}

/** The part of the GraphQL context the budget lives in. */
export interface FieldBudgetContext {
  fieldBudget?: Budget;
}

export interface FieldBudgetOptions {
  /** Fields one operation may resolve, every list item counted (`MAX_RESOLVED_FIELDS`). */
  readonly maxResolvedFields: number;
  /** Characters of text one answer may carry (`MAX_ANSWER_BYTES`). */
  readonly maxAnswerBytes: number;
  /** Time one operation may take to execute (`MAX_EXECUTION_MS`). */
  readonly maxExecutionMs: number;
}

/**
 * Bounds what one operation can make the gateway build. The static limits (`useQueryLimits`) see
 * the document, not the data: `components { children { group { children … } } }` is cheap on paper
 * and multiplies by the feed's sizes at every level, and thirty aliases of every update's body
 * are few fields of many bytes. Every field resolved, every list item included, spends from a
 * budget of fields, the text it resolves to from a budget of bytes, and every field checks the
 * deadline; past any of them the operation stops with one error and no partial answer, so neither
 * time nor memory grow with the product of list sizes. Each event of a subscription is an
 * operation of its own: it gets a whole budget.
 */
export function useFieldBudget(options: FieldBudgetOptions): Plugin {
  const fresh = () => freshBudget(options);
  return {
    onExecute({ args }) {
      const context = args.contextValue as FieldBudgetContext;
      context.fieldBudget = fresh();
      return {
        onExecuteDone({ result, setResult }) {
          const exceeded = context.fieldBudget?.exceeded;
          if (exceeded && !(Symbol.asyncIterator in result)) setResult({ errors: [exceeded] });
        },
      };
    },
    onSubscribe({ args }) {
      const context = args.contextValue as FieldBudgetContext;
      context.fieldBudget = fresh();
      return {
        onSubscribeResult: () => ({
          onNext({ result, setResult }) {
            const settled = settleFieldBudget(context, result);
            if (settled !== result) setResult(settled);
          },
        }),
      };
    },
  };
}

/**
 * A subscription event's result as its budget leaves it: one error if the event overspent it, the
 * result itself otherwise. The budget is made whole again: events are executed one after another,
 * each with a budget of its own.
 */
export function settleFieldBudget(
  context: FieldBudgetContext,
  result: ExecutionResult,
): ExecutionResult {
  const budget = context.fieldBudget;
  if (!budget) return result;
  context.fieldBudget = freshBudget(budget.limits);
  return budget.exceeded ? { errors: [budget.exceeded] } : result;
}

const freshBudget = (limits: FieldBudgetOptions): Budget => ({
  fields: limits.maxResolvedFields,
  bytes: limits.maxAnswerBytes,
  limits,
  deadline: undefined,
  exceeded: undefined,
});

const LIMITS = {
  MAX_RESOLVED_FIELDS:
    'The operation asks for more data than the gateway builds for one request: select fewer nested lists (for example not `children` inside `group` inside `children`), or split it.',
  MAX_ANSWER_BYTES:
    'The answer would be larger than the gateway sends for one request: select fewer or shorter fields, or split the operation.',
  MAX_EXECUTION_MS:
    'The operation took longer than the gateway allows one request: select less, or split it.',
} as const;

/** Stops the operation: a fresh error each time, since graphql-js annotates what it catches. */
function stop(budget: Budget, limit: keyof typeof LIMITS): never {
  const error = new GraphQLError(LIMITS[limit], {
    extensions: { code: 'BAD_USER_INPUT', limit },
  });
  budget.exceeded ??= error;
  throw error;
}

/** Makes every field of `schema` spend from the operation's budget as it resolves. */
export function spendFieldBudget(schema: GraphQLSchema): GraphQLSchema {
  return wrapResolvers<FieldBudgetContext>(schema, (resolve) => (source, args, context, info) => {
    const budget = context.fieldBudget;
    if (!budget) return resolve(source, args, context, info);
    if (budget.exceeded) throw budget.exceeded;
    if (--budget.fields < 0) stop(budget, 'MAX_RESOLVED_FIELDS');
    const now = Date.now();
    budget.deadline ??= now + budget.limits.maxExecutionMs;
    if (now > budget.deadline) stop(budget, 'MAX_EXECUTION_MS');
    const value = resolve(source, args, context, info);
    if (typeof value === 'string') {
      budget.bytes -= value.length;
      if (budget.bytes < 0) stop(budget, 'MAX_ANSWER_BYTES');
    }
    return value;
  });
}
