import { isAsyncIterable, type Plugin } from 'graphql-yoga';

/**
 * Ends a subscription as soon as its request is aborted: over SSE, the moment the client's socket
 * closes. Without it an SSE stream noticed a gone client only when its next write failed, at the
 * next keep-alive line (12 s later), and until then the subscription still counted toward the
 * limits: a crowd that came and went kept the next one out. A WebSocket's request never aborts;
 * graphql-ws ends its subscriptions itself when the socket closes.
 *
 * The signal is not given to the executor (`args.signal`, as Yoga's `useExecutionCancellation`
 * does): it races every object of every event against it, and a signal that never aborts kept
 * each of those races, with the values they settled with, for as long as the subscription lasted.
 */
export function useSubscriptionAbort(): Plugin {
  return {
    onSubscribe({ args }) {
      const signal = (args.contextValue as { request?: Request }).request?.signal;
      if (!signal) return;
      return {
        onSubscribeResult({ result }) {
          if (!isAsyncIterable(result)) return;
          const end = () => void result[Symbol.asyncIterator]().return?.();
          if (signal.aborted) end();
          else signal.addEventListener('abort', end, { once: true });
        },
      };
    },
  };
}
