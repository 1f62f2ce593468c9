import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import {
  type FieldBudgetContext,
  type FieldBudgetOptions,
  freshBudget,
} from '../schema/plugins/field-budget.js';

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
  return {
    onExecute({ args }) {
      const context = args.contextValue as FieldBudgetContext;
      context.fieldBudget = freshBudget(options);
      return {
        onExecuteDone({ result, setResult }) {
          if (!(Symbol.asyncIterator in result)) setResult(settleFieldBudget(context, result));
        },
      };
    },
    // Each event of a subscription is executed with a budget of its own, settled as it is sent.
    onSubscribe({ args }) {
      const context = args.contextValue as FieldBudgetContext;
      context.fieldBudget = freshBudget(options);
      return {
        onSubscribeResult: () => ({
          onNext: ({ result, setResult }) => setResult(settleFieldBudget(context, result)),
        }),
      };
    },
  };
}

/**
 * The result as its budget leaves it: one error if the operation overspent it, the result itself
 * otherwise. The budget is made whole again: a subscription's events are executed one after
 * another, each with a budget of its own.
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
