import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** The part of the context where resolvers report errors while still answering with data. */
export interface PartialErrorsContext {
  readonly partialErrors: GraphQLError[];
}

/**
 * Lets a resolver answer and say what went wrong at once: `supportedChains` is an empty list with
 * an error beside it when the upstream has no list, rather than null for the whole response.
 * The errors reported during an operation are appended to its result, and to each event of a
 * subscription those reported while it was executed.
 */
export function usePartialErrors(): Plugin<PartialErrorsContext> {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone({ result, setResult }) {
        if (!(Symbol.asyncIterator in result)) {
          setResult(settlePartialErrors(args.contextValue, result));
        }
      },
    }),
    onSubscribe: ({ args }) => ({
      onSubscribeResult: () => ({
        onNext: ({ result, setResult }) =>
          setResult(settlePartialErrors(args.contextValue, result)),
      }),
    }),
  };
}

/** `result` with the errors its resolvers reported appended, which are then let go of. */
export function settlePartialErrors(
  context: PartialErrorsContext,
  result: ExecutionResult,
): ExecutionResult {
  const { partialErrors } = context;
  if (partialErrors.length === 0) return result;
  const settled = { ...result, errors: [...(result.errors ?? []), ...partialErrors] };
  partialErrors.length = 0;
  return settled;
}
