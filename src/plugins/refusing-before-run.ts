import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * A plugin that answers what `refusalOf` says instead of running the operation, a query or
 * mutation (`onExecute`) or a subscription (`onSubscribe`) alike, before any resolver.
 */
export function refusingBeforeRun(
  refusalOf: (args: ExecutionArgs) => ExecutionResult | undefined,
): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refused = refusalOf(args);
      if (refused) setResultAndStopExecution(refused);
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refused = refusalOf(args);
      if (refused) setResultAndStopExecution(refused);
    },
  };
}
