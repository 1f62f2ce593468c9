import type { ExecutionResult } from 'graphql';

/** The text of each result made to be written to many subscribers, made once, then copied. */
const texts = new WeakMap<object, () => string>();

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
  const stringify = () => (text ??= JSON.stringify(result));
  Object.defineProperty(result, 'stringify', { value: stringify, enumerable: false });
  texts.set(result, stringify);
  return Object.freeze(result);
}

/** The JSON text of a result made by `sharedResult`, the same string for every subscriber. */
export const serialisedOf = (result: unknown): string | undefined =>
  texts.get(result as object)?.();
