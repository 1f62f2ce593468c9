import {
  defaultFieldResolver,
  GraphQLError,
  type GraphQLFieldResolver,
  type GraphQLSchema,
  isObjectType,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** The part of the GraphQL context the budget lives in, made fresh for each operation. */
export interface FieldBudgetContext {
  fieldBudget?: { remaining: number; exceeded: GraphQLError | undefined };
}

export interface FieldBudgetOptions {
  /** Fields one operation may resolve, every list item counted (see `MAX_RESOLVED_FIELDS`). */
  readonly maxResolvedFields: number;
}

/**
 * Bounds what one operation can make the gateway build. The static limits (`useQueryLimits`) see
 * the document, not the data: `components { children { group { children … } } }` is cheap on paper
 * and multiplies by the feed's sizes at every level. Every field resolved, every list item
 * included, spends from a budget; past it the operation stops with one error, and no partial
 * answer, so neither time nor memory grow with the product of list sizes.
 */
export function useFieldBudget({ maxResolvedFields }: FieldBudgetOptions): Plugin {
  return {
    onExecute({ args }) {
      const context = args.contextValue as FieldBudgetContext;
      context.fieldBudget = { remaining: maxResolvedFields, exceeded: undefined };
      return {
        onExecuteDone({ result, setResult }) {
          const exceeded = context.fieldBudget?.exceeded;
          if (exceeded && !(Symbol.asyncIterator in result)) setResult({ errors: [exceeded] });
        },
      };
    },
  };
}

/** Makes every field of `schema` spend from the operation's budget before it resolves. */
export function spendFieldBudget(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const resolve: GraphQLFieldResolver<unknown, FieldBudgetContext> =
        field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context: FieldBudgetContext, info) => {
        const budget = context.fieldBudget;
        if (budget && --budget.remaining < 0) {
          // A fresh error each time: graphql-js annotates what it catches with its path.
          const error = new GraphQLError(
            'The operation asks for more data than the gateway builds for one request: select fewer nested lists (for example not `children` inside `group` inside `children`), or split it.',
            { extensions: { code: 'BAD_USER_INPUT', limit: 'MAX_RESOLVED_FIELDS' } },
          );
          budget.exceeded ??= error;
          throw error;
        }
        return resolve(source, args, context, info);
      };
    }
  }
  return schema;
}
