import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { subscribeSse } from '../helpers/subscriptions.js';

/*
 * Finding: an SSE subscription stayed counted 10 to 12 s after its client's socket was gone: its
 * stream noticed only when the next keep-alive line failed to write. 500 dead ones refused 500 new
 * ones with TOO_MANY_SUBSCRIPTIONS. Now a subscription ends when its request is aborted, the
 * moment the socket closes.
 */

const LIMIT = 20;
const PAGE = 'subscription { statusPageChanged { name } }';

let harness: Harness;
let nodeEnv: string | undefined;
beforeAll(async () => {
  // Yoga writes an SSE keep-alive line every 300 ms under NODE_ENV=test, which would hide the
  // finding; production writes one every 12 s.
  nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  harness = await startHarness({ env: { MAX_SUBSCRIPTIONS: LIMIT }, logLevel: 'silent' });
});
afterAll(async () => {
  process.env.NODE_ENV = nodeEnv;
  await harness?.close();
});

/**
 * Subscribes over SSE, as GET (EventSource) or POST; resolves with the subscription once its first
 * event came. Closing it aborts the request, which closes its socket.
 */
async function subscribe(method: 'GET' | 'POST') {
  const subscription = await subscribeSse(harness.origin, PAGE, undefined, { method });
  await subscription.next();
  return subscription;
}

/** The `graphql_subscriptions_open` gauge, every series added up. */
async function openSubscriptions(): Promise<number> {
  const text = await (await harness.fetch('/metrics')).text();
  return [...text.matchAll(/^graphql_subscriptions_open\{[^}]*\} (\d+)$/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
}

describe('SSE subscriptions whose clients are gone', () => {
  it.each(['GET', 'POST'] as const)(
    'stop counting as soon as the socket closes (%s), so as many new ones are accepted',
    async (method) => {
      const crowd = await Promise.all(Array.from({ length: LIMIT }, () => subscribe(method)));
      expect(await openSubscriptions()).toBe(LIMIT);
      await Promise.all(crowd.map((subscription) => subscription.close()));

      // Well before the next keep-alive line (12 s), which is when they ended before.
      await eventually(async () => (await openSubscriptions()) === 0, { timeoutMs: 5_000 });
      const next = await Promise.all(Array.from({ length: LIMIT }, () => subscribe(method)));
      const name = harness.simulator.statusFeed.summary.page.name;
      expect(next.map(({ events }) => events[0])).toEqual(
        Array.from({ length: LIMIT }, () => ({ data: { statusPageChanged: { name } } })),
      );
      await Promise.all(next.map((subscription) => subscription.close()));
      await eventually(async () => (await openSubscriptions()) === 0, { timeoutMs: 5_000 });
    },
  );
});
