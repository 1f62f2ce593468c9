import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ExecutionResult } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { extraListeners } from '../helpers/extra-listeners.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { subscribeSse, subscribeWs, wsClient } from '../helpers/subscriptions.js';

/*
 * Findings: `statusPageChanged` with the page tree held about 390 KB per idle subscriber on a
 * 500-component page (83 KB on a 66-component one); 331 to 540 of them ended the production
 * process (--max-old-space-size=256), below the default MAX_SUBSCRIPTIONS of 1,000. And one client
 * could take every subscription there was. Now a new subscription is refused while the heap is
 * above SUBSCRIPTION_HEAP_LIMIT of its limit, whatever the counts allow, and one client holds at
 * most MAX_SUBSCRIPTIONS_PER_CLIENT, over SSE and WebSocket together.
 */

const PAGE = 'subscription { statusPageChanged { name } }';
type Page = { statusPageChanged: { name: string } };

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const used = () => getHeapStatistics().used_heap_size;
const MiB = 2 ** 20;

/*
 * One gateway for every limit: 3 subscriptions a client behind a proxy, HTTP_MAX_CONNECTIONS of 8
 * (so MAX_SSE_SUBSCRIPTIONS of 6, on its own listener) and a heap line at least 160 MiB above what
 * this process holds before it starts, which the heap tests cross. The tests but the one about
 * connections reach it through a listener of their own (the connection cap as it ships), so that
 * its own listener holds no other test's connections.
 */
let harness: Harness;
/** SUBSCRIPTION_HEAP_LIMIT of `harness`: a share of the heap limit, in tenths of a percent. */
let share: number;
/** SUBSCRIPTION_HEAP_LIMIT of `harness`, in bytes of heap in use. */
let line: number;
const listeners = extraListeners();
beforeAll(async () => {
  gc();
  // The gateway (in this process) and this test's heap, with at least 160 MiB to spare.
  const limit = getHeapStatistics().heap_size_limit;
  share = Math.ceil(((used() + 160 * MiB) / limit) * 1_000) / 1_000;
  line = share * limit;
  harness = await startHarness({
    env: {
      MAX_SUBSCRIPTIONS_PER_CLIENT: 3,
      TRUSTED_PROXIES: 1,
      HTTP_MAX_CONNECTIONS: 8,
      SUBSCRIPTION_HEAP_LIMIT: share,
    },
    logLevel: 'info',
  });
});
afterAll(() => harness?.close());

const logged = (msg: string) => harness.logs.filter((entry) => entry.msg === msg).length;
const closers: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  // Every subscription let go by the gateway too: the next test's counts are its own.
  await eventually(() => logged('subscription closed') === logged('subscription opened'));
  await listeners.close();
});
/** A listener of `harness`'s gateway for this test alone. */
const ownOrigin = async () => (await listeners.listen(harness)).origin;

const limitOf = (result: ExecutionResult<unknown> | undefined) =>
  result?.errors?.[0]?.extensions && {
    code: result.errors[0].extensions.code,
    limit: result.errors[0].extensions.limit,
  };

/** The first thing a subscription gets: its first event, or the error it was refused with. */
async function firstOverSse(origin: string, client: string) {
  const subscription = await subscribeSse<Page>(origin, PAGE, undefined, {
    headers: { 'x-forwarded-for': client },
  });
  closers.push(() => subscription.close());
  return subscription.next();
}

/** `firstOverSse`, the subscription then closed, and let go by the gateway, before it resolves. */
async function firstAndGone(origin: string, client: string) {
  const opened = logged('subscription opened');
  const closed = logged('subscription closed');
  const subscription = await subscribeSse<Page>(origin, PAGE, undefined, {
    headers: { 'x-forwarded-for': client },
  });
  try {
    return await subscription.next();
  } finally {
    await subscription.close();
    await eventually(
      () => logged('subscription closed') - closed >= logged('subscription opened') - opened,
    );
  }
}

async function firstOverWs(origin: string, client: string) {
  const socket = wsClient(origin, { headers: { 'x-forwarded-for': client } });
  const subscription = subscribeWs<Page>(socket, PAGE);
  closers.push(async () => {
    await subscription.close();
    await socket.dispose();
  });
  const first = await Promise.race([subscription.next(), subscription.error]);
  // graphql-ws hands a refusal to `error` as the list of GraphQL errors.
  return (Array.isArray(first) ? { errors: first } : first) as ExecutionResult<Page>;
}

describe('subscriptions per client', () => {
  it('holds a client to its share over SSE and WebSocket together; other clients are served', async () => {
    const name = harness.simulator.statusFeed.summary.page.name;
    const origin = await ownOrigin();
    const crowd = '203.0.113.7';
    // Two over SSE, one over a WebSocket: the client's three.
    for (const first of [
      await firstOverSse(origin, crowd),
      await firstOverSse(origin, crowd),
      await firstOverWs(origin, crowd),
    ]) {
      expect(first).toEqual({ data: { statusPageChanged: { name } } });
    }
    const refusal = { code: 'TOO_MANY_SUBSCRIPTIONS', limit: 'MAX_SUBSCRIPTIONS_PER_CLIENT' };
    expect(limitOf(await firstOverSse(origin, crowd))).toEqual(refusal);
    expect(limitOf(await firstOverWs(origin, crowd))).toEqual(refusal);
    const refused = await firstOverSse(origin, crowd);
    expect(refused.errors?.[0]?.message).toBe(
      'This client already holds 3 subscriptions, over SSE and WebSocket together, as many as one client may. Close one first.',
    );

    // Another client is not held to the first one's count.
    expect(await firstOverSse(origin, '203.0.113.8')).toEqual({
      data: { statusPageChanged: { name } },
    });

    // Once the client closes its subscriptions, it may subscribe again.
    await Promise.all(closers.splice(0).map((close) => close()));
    await eventually(async () => {
      const first = await firstOverSse(origin, crowd);
      return first.data?.statusPageChanged.name === name;
    });
  });
});

/**
 * Arrays of 8 MB (V8's large-object space), held, until the heap in use is over `line`, one a
 * turn of the event loop, as a server's work comes.
 */
const fillPast = async (line: number) => {
  const filled: unknown[] = [];
  while (used() <= line) {
    filled.push(new Array(1_000_000).fill(0));
    await new Promise((resolve) => setImmediate(resolve));
  }
  return filled;
};
/** Lets the gateway hear of a full collection (a `PerformanceObserver` entry, a turn later). */
const collect = async () => {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 50));
};

describe('subscriptions and the heap', () => {
  it('refuses a new subscription over either transport when the heap is over its share, whatever MAX_SUBSCRIPTIONS allows', async () => {
    const origin = await ownOrigin();
    const refusal = { code: 'TOO_MANY_SUBSCRIPTIONS', limit: 'SUBSCRIPTION_HEAP_LIMIT' };
    // Live objects over the line, held.
    await collect();
    const kept = await fillPast(line);
    try {
      await collect();
      // The gateway reads the collection a turn after it (see the garbage test below).
      const overSse = await eventually(async () => {
        const first = await firstAndGone(origin, '198.51.100.1');
        return limitOf(first)?.limit === 'SUBSCRIPTION_HEAP_LIMIT' && first;
      });
      expect(limitOf(overSse)).toEqual(refusal);
      expect(overSse.errors?.[0]?.message).toBe(
        `The gateway has no memory for another subscription: more than ${Math.round(share * 1_000) / 10}% of its heap is in use. Retry later.`,
      );
      expect(limitOf(await firstOverWs(origin, '198.51.100.1'))).toEqual(refusal);

      // Queries are still answered: only what stays open is refused.
      const { body } = await harness.execute<{ statusPage: { name: string } }>(
        '{ statusPage { name } }',
      );
      expect(body.data?.statusPage.name).toBe(harness.simulator.statusFeed.summary.page.name);
      expect(kept.length).toBeGreaterThan(0);
    } finally {
      // Under the line again, and the gateway's reading with it, for the tests after this one.
      kept.length = 0;
      await collect();
    }
  });
});

describe('subscriptions and garbage', () => {
  /*
   * Finding (issue 36): the heap in use counted garbage not yet collected, and a flood's garbage
   * refused other clients' subscriptions. Now the rule reads the heap in use after a full
   * collection (V8's last one, or one it makes) once the heap in use is over the line.
   */
  it('admits a subscription while garbage takes the heap in use over SUBSCRIPTION_HEAP_LIMIT, and refuses one while live objects do', async () => {
    const name = harness.simulator.statusFeed.summary.page.name;
    const origin = await ownOrigin();
    await collect();
    // What the harness holds leaves room: the line is crossed by what follows, not by it.
    expect(used() + 64 * MiB).toBeLessThan(line);
    // Garbage from here on: held until the line is crossed, then let go. (Made as garbage from the
    // start, V8 may collect it before the line is ever reached: how often depends on the machine.)
    // A collection of V8's own while the last of it was still held is read a turn later as live
    // objects over the line (rightly, then), and the gateway stands by that reading for 10 s: such
    // a try proves nothing either way and is made again. A rule that counted garbage refuses them all.
    const admitted = await eventually(async () => {
      await collect();
      const garbage = await fillPast(line);
      garbage.length = 0;
      // Over the line when the gateway reads it, unless V8 collected it in between.
      if (used() <= line) return false;
      const first = await firstAndGone(origin, '198.51.100.2');
      return first.data !== undefined && first;
    });
    expect(admitted).toEqual({ data: { statusPageChanged: { name } } });

    // Live from here on: held, the garbage above collected first.
    await collect();
    const kept = await fillPast(line);
    try {
      await collect();
      // The gateway reads the collection a turn after it, later on a busy machine: until then it
      // stands by the reading before, and admits (each one admitted is let go before the next
      // try, within the client's and the gateway's counts).
      const refused = await eventually(async () =>
        limitOf(await firstAndGone(origin, '198.51.100.3')),
      );
      expect(refused).toEqual({
        code: 'TOO_MANY_SUBSCRIPTIONS',
        limit: 'SUBSCRIPTION_HEAP_LIMIT',
      });
      expect(kept.length).toBeGreaterThan(0);
    } finally {
      // Under the line again, and the gateway's reading with it, for the tests after this one.
      kept.length = 0;
      await collect();
    }
  });
});

describe('a subscription refused for its arguments', () => {
  it("is the client's error over SSE: 200 with the error as an event, logged as a request, not a fault", async () => {
    const logs = harness.logs.length;
    const subscription = await subscribeSse(
      await ownOrigin(),
      'subscription { componentStatusChanged(ids: ["nope"]) { status } }',
    );
    closers.push(() => subscription.close());
    expect(subscription.response.status).toBe(200);
    expect(await subscription.next()).toMatchObject({
      errors: [{ extensions: { code: 'BAD_USER_INPUT', field: 'ids' } }],
    });
    // Its request line is the client's (info), not the gateway's fault (error).
    const request = await eventually(() =>
      harness.logs
        .slice(logs)
        .find((entry) => entry.msg === 'request' && entry.code === 'BAD_USER_INPUT'),
    );
    expect(request).toMatchObject({ level: 30, status: 200 });
  });
});

describe('SSE subscriptions and the connections', () => {
  it('refuses SSE past MAX_SSE_SUBSCRIPTIONS, so that a crowd on SSE leaves /health its connections', async () => {
    // MAX_SSE_SUBSCRIPTIONS is unset: three quarters of HTTP_MAX_CONNECTIONS, 6; through the
    // listener HTTP_MAX_CONNECTIONS caps, which no other test has used.
    const name = harness.simulator.statusFeed.summary.page.name;
    const origin = harness.origin;
    for (let i = 0; i < 6; i += 1) {
      expect(await firstOverSse(origin, `203.0.113.${i}`)).toEqual({
        data: { statusPageChanged: { name } },
      });
    }
    expect(limitOf(await firstOverSse(origin, '203.0.113.99'))).toEqual({
      code: 'TOO_MANY_SUBSCRIPTIONS',
      limit: 'MAX_SSE_SUBSCRIPTIONS',
    });
    // Six streams and the refused one's connection gone: /health still has one.
    expect((await harness.fetch('/health')).status).toBe(200);
  });
});
