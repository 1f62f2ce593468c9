import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Lets go of each subscription event's result once it is handed on. The executor
 * (`@graphql-tools/executor`'s `flattenAsyncIterable`) keeps the last event's result reachable from
 * its suspended `next` while the subscription waits for the next event: for `statusPageChanged`
 * with the page tree, the whole answer tree (about 80 KB on a 66-component page, 300 KB on a
 * 500-component one) per idle subscriber. The transports get a copy of the result; the object the
 * executor keeps is emptied, so only the copy holds the answer, until it is sent.
 *
 * It must come before every other plugin that handles subscription events, so that the result it
 * empties is the executor's own.
 */
export function useReleasedEvents(): Plugin {
  return {
    onSubscribe: () => ({
      onSubscribeResult: () => ({
        onNext({ result, setResult }) {
          setResult({ ...result });
          const kept = result as Record<keyof ExecutionResult, unknown>;
          for (const key of Object.keys(kept) as (keyof ExecutionResult)[]) delete kept[key];
        },
      }),
    }),
  };
}
