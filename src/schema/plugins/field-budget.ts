import SchemaBuilder, { BasePlugin, type SchemaTypes } from '@pothos/core';
import type { GraphQLError, GraphQLFieldResolver } from 'graphql';
import { codedError } from '../../errors/coded-error.js';

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      fieldBudget: FieldBudgetPlugin<Types>;
    }
  }
}

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

/** A whole budget, for one operation or one subscription event (`useFieldBudget`). */
export const freshBudget = (limits: FieldBudgetOptions): Budget => ({
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
  const error = codedError('BAD_USER_INPUT', LIMITS[limit], { extensions: { limit } });
  budget.exceeded ??= error;
  throw error;
}

/**
 * Makes every field spend from the operation's budget as it resolves (see `useFieldBudget`): one
 * field, the text it resolves to, and a look at the deadline.
 */
export class FieldBudgetPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolve: GraphQLFieldResolver<unknown, Types['Context'], object>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    return (source, args, context: FieldBudgetContext, info) => {
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
    };
  }
}

const pluginName = 'fieldBudget';
SchemaBuilder.registerPlugin(pluginName, FieldBudgetPlugin);

export default pluginName;
