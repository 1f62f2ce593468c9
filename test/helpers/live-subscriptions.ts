import { eventually } from './eventually.js';
import type { Harness } from './harness.js';

/** Subscriptions the gateway holds open now, over every field and transport (`/metrics`). */
export async function openSubscriptions(harness: Harness): Promise<number> {
  const text = await (await harness.fetch('/metrics')).text();
  return [...text.matchAll(/^graphql_subscriptions_open\{[^}]*\} (\d+)$/gm)].reduce(
    (sum, [, value]) => sum + Number(value),
    0,
  );
}

/**
 * Resolves once the gateway has seen every subscription and WebSocket of a shared harness end,
 * so that the next test's counts (admission, clients, `graphql_subscriptions_open`) start from
 * zero: the server learns that an SSE client went, or a socket closed, only after the client did.
 * Sockets are counted by the gateway's `websocket opened` and `websocket closed` lines, which a
 * harness keeps at `logLevel` `info` or below.
 */
export async function allEnded(harness: Harness): Promise<void> {
  const count = (message: string) => harness.logs.filter((line) => line.msg === message).length;
  await eventually(
    async () =>
      count('websocket opened') === count('websocket closed') &&
      (await openSubscriptions(harness)) === 0,
  );
}
