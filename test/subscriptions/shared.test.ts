import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSimulatedFeed,
  STATUS_FEED_PRESETS,
} from '../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { PAGE_TREE_QUERY } from '../../src/http/page-tree-query.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { openRawSocket, type RawSocket } from '../helpers/raw-socket.js';
import { parseSse, subscribeSse } from '../helpers/subscriptions.js';

/*
 * SSE clients who send the same request share one subscription: what each is owed as a client
 * (its own admission, request id, the end of its stream when it does not read) stays its own.
 */

const PAGE = 'subscription { statusPageChanged { fetchedAt components { id name status } } }';
const MAX_BUFFERED = 64 * 1024;
/** The whole page tree (about 100 KB on the large feed): a few changes fill a socket's buffers. */
const PAGE_TREE = PAGE_TREE_QUERY.replace('query PageTree', 'subscription PageTree').replace(
  'statusPage {',
  'statusPageChanged {',
);

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({
    simulator: { statusFeed: createSimulatedFeed(STATUS_FEED_PRESETS.large) },
    env: {
      SUBSCRIPTION_MAX_BUFFERED_BYTES: MAX_BUFFERED,
      STATUS_CACHE_TTL_MS: 100,
      STATUS_POLL_INTERVAL_MS: 100,
      MAX_SUBSCRIPTIONS_PER_CLIENT: 1_000,
    },
    logLevel: 'silent',
  });
});
afterAll(async () => {
  await harness?.close();
});

/** The sum of a metric's series, those whose labels include `labels`. */
const metric = async (name: string, labels = '') => {
  const text = await (await harness.fetch('/metrics')).text();
  return [...text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\d+)$`, 'gm'))]
    .filter(([, series = '']) => series.includes(labels))
    .reduce((sum, [, , value]) => sum + Number(value), 0);
};

/** Sends an SSE subscription over a raw socket, then reads nothing. */
async function stalledSubscriber(): Promise<RawSocket> {
  const raw = await openRawSocket(harness.origin);
  const body = JSON.stringify({ query: PAGE_TREE });
  raw.socket.write(
    `POST /graphql HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  await eventually(() => parseSse(raw.received()).some(({ event }) => event === 'next'));
  raw.socket.pause();
  return raw;
}

/** Flips a component, back and forth, so that every poll finds a change. */
function flipper() {
  const [component] = harness.simulator.statusFeed.summary.components.filter(
    (candidate) => !candidate.group,
  );
  let degraded = false;
  const timer = setInterval(() => {
    degraded = !degraded;
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, {
        [component?.id ?? '']: degraded ? 'degraded_performance' : 'operational',
      }),
    );
  }, 100);
  return () => clearInterval(timer);
}

describe('SSE subscribers of the same request', () => {
  it('are each admitted and answered with their own request id', async () => {
    const before = await metric('graphql_subscriptions_open');
    const subscribers = await Promise.all(
      ['shared-a', 'shared-b', 'shared-c'].map((requestId) =>
        subscribeSse(harness.origin, PAGE, undefined, { headers: { 'x-request-id': requestId } }),
      ),
    );
    for (const subscriber of subscribers) await subscriber.next();
    expect(await metric('graphql_subscriptions_open')).toBe(before + 3);
    expect(subscribers.map(({ response }) => response.headers.get('x-request-id'))).toEqual([
      'shared-a',
      'shared-b',
      'shared-c',
    ]);
    for (const subscriber of subscribers) await subscriber.close();
    await eventually(async () => (await metric('graphql_subscriptions_open')) === before);
  });

  it('end one that does not read with SLOW_SUBSCRIBER, and go on for those that do', async () => {
    const reader = await subscribeSse(harness.origin, PAGE_TREE);
    await reader.next();
    const stalled = await stalledSubscriber();
    const stop = flipper();
    try {
      await eventually(
        async () => (await metric('graphql_subscriptions_ended_total', 'reason="slow"')) === 1,
        { timeoutMs: 30_000 },
      );
      // The reader still gets the changes after that.
      const seen = reader.events.length;
      await eventually(() => reader.events.length > seen + 1);
    } finally {
      stop();
    }
    // What the stalled client finds once it reads: the pages it was owed, then the error.
    stalled.socket.resume();
    await stalled.ended;
    const events = parseSse(stalled.received()).filter(({ event }) => event);
    expect(events.at(-1)).toEqual({ event: 'complete', data: '' });
    expect(JSON.parse(events.at(-2)?.data ?? '')).toMatchObject({
      errors: [
        {
          extensions: { code: 'SLOW_SUBSCRIBER', limit: 'SUBSCRIPTION_MAX_BUFFERED_BYTES' },
        },
      ],
    });
    await reader.close();
  }, 40_000);

  it('run an operation that is not a subscription for each client', async () => {
    const query = '{ statusPage { name } }';
    const answers = await Promise.all(
      [1, 2, 3].map(async () => {
        const subscriber = await subscribeSse(harness.origin, query);
        const event = await subscriber.next();
        await subscriber.completed;
        return event;
      }),
    );
    expect(answers).toMatchObject([1, 2, 3].map(() => ({ data: { statusPage: {} } })));
  });

  it('share a refusal the operation itself earns', async () => {
    const answers = await Promise.all(
      [1, 2, 3].map(async () => {
        const subscriber = await subscribeSse(harness.origin, 'subscription { nope }');
        const event = await subscriber.next();
        return event;
      }),
    );
    expect(answers.map((answer) => answer.errors?.[0]?.extensions)).toMatchObject(
      [1, 2, 3].map(() => ({ code: 'GRAPHQL_VALIDATION_FAILED' })),
    );
  });
});
