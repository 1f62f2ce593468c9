import type { ExecutionResult } from 'graphql';

/** Results made to be written to many subscribers: their text is made once, then copied. */
const shared = new WeakSet<object>();

/**
 * Makes `result` one that many subscribers are sent as is: frozen, since every subscriber's
 * plugins see the same object, and carrying its JSON text, made the first time a transport asks
 * for it. Yoga's SSE and multipart writers call a result's own `stringify` when it has one (and
 * copy a result with errors first, which drops it: those get Yoga's own serialisation); the
 * WebSocket server asks `serialisedOf`. It is not enumerable, so it is never part of the result.
 * Only a result without errors is shared this way: each subscriber masks errors on its own copy.
 */
export function sharedResult(result: ExecutionResult): ExecutionResult {
  if (result.errors?.length) return result;
  let text: string | undefined;
  Object.defineProperty(result, 'stringify', {
    value: () => {
      text ??= JSON.stringify(result);
      return text;
    },
    enumerable: false,
  });
  shared.add(result);
  return Object.freeze(result);
}

/** The JSON text of a result made by `sharedResult`, the same string for every subscriber. */
export function serialisedOf(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null || !shared.has(result)) return undefined;
  return (result as { stringify: () => string }).stringify();
}
