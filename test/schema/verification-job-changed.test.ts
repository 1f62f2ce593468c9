import type { ExecutionResult } from 'graphql';
import type { Client } from 'graphql-ws';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixtureContract } from '../../simulator/src/verification/fixture.js';
import { eventually } from '../helpers/eventually.js';
import type { Harness } from '../helpers/harness.js';
import { sharedHarnesses } from '../helpers/shared-harness.js';
import { type Received, subscribeSse, subscribeWs, wsClient } from '../helpers/subscriptions.js';
import { sourceInput } from '../helpers/verification-inputs.js';

/*
 * verificationJobChanged over SSE and graphql-ws, against today's Sourcify: the job's state on
 * subscribe, each change, the completed state, then the end; one poll of the job per interval
 * however many watch it; a stuck job turning stale.
 */

const GREETER = fixtureContract('Greeter');
const INTERVAL_MS = 200;

const WATCH = /* GraphQL */ `
  subscription ($id: ID!) {
    verificationJobChanged(id: $id) {
      __typename
      ... on Error { message }
      ... on InvalidInputError { field }
      ... on VerificationPending { verificationId stale message job { completed } }
      ... on VerificationResult { alreadyVerified contracts { status name } job { completed compilationTimeMs } }
      ... on VerificationRejectedError { reason job { error { code } } }
    }
  }
`;
const FROM_SOURCE = /* GraphQL */ `
  mutation ($input: VerifyFromSourceInput!) {
    verifyContractFromSource(input: $input) { __typename ... on VerificationPending { verificationId } }
  }
`;
const JOB = /* GraphQL */ `
  query ($id: ID!) {
    verificationJob(id: $id) { __typename ... on VerificationPending { stale message } }
  }
`;

type Event = {
  verificationJobChanged: {
    __typename: string;
    stale?: boolean;
    message?: string | null;
    field?: string;
    reason?: string;
  };
};

/**
 * Subscriptions one client may hold (MAX_SUBSCRIPTIONS_PER_CLIENT): the ten of the test of many
 * subscribers, and one more for the test of the limit.
 */
const MAX_SUBSCRIPTIONS = 10;
/**
 * How long a job runs before it is reported stale (VERIFY_JOB_STALE_MS): longer than the watches
 * keep a job running (a second or two), short enough for the stuck job's test to see it. Sourcify's
 * job times are whole seconds: a job may look up to a second older than it is.
 */
const STALE_MS = 5_000;

/*
 * One gateway for the watches, the stuck job and the per-client limit, reset through the simulator
 * before each test; polled every interval, without backing off, so that the watches' jobs end
 * well before they turn stale. (A job id given to the session API: verification.test.ts, whose
 * gateway speaks it; a watch ended by shutdown: test/subscriptions/lifecycle.test.ts.)
 */
const shared = sharedHarnesses();
afterAll(() => shared.close());
const watching = () =>
  shared.use({
    env: {
      VERIFY_WAIT_MS: 50,
      VERIFY_POLL_INTERVAL_MS: 10,
      VERIFY_WATCH_INTERVAL_MS: INTERVAL_MS,
      VERIFY_WATCH_MAX_INTERVAL_MS: INTERVAL_MS,
      VERIFY_JOB_STALE_MS: STALE_MS,
      MAX_SUBSCRIPTIONS_PER_CLIENT: MAX_SUBSCRIPTIONS,
    },
    logLevel: 'silent',
  });

/** The shared gateway the test used: its subscriptions are closed, and let go of, after it. */
let used: Harness | undefined;
const closers: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  const harness = used;
  used = undefined;
  if (!harness) return;
  // A subscription a client closed is let go of once the gateway hears of it: the next test's
  // count of one client's subscriptions starts at none.
  await eventually(async () => {
    for (const transport of ['http', 'websocket']) {
      const open = await harness.metric(
        `graphql_subscriptions_open{field="verificationJobChanged",transport="${transport}"}`,
      );
      if (open > 0) return false;
    }
    return true;
  });
});

function overSse(harness: Harness, id: string) {
  return subscribeSse<Event>(harness.origin, WATCH, { id }).then((subscription) => {
    closers.push(() => subscription.close());
    return subscription;
  });
}

function overWs(harness: Harness, id: string, client?: Client) {
  const socket = client ?? wsClient(harness.origin);
  const subscription = subscribeWs<Event>(socket, WATCH, { id });
  closers.push(async () => {
    await subscription.close();
    if (!client) await socket.dispose();
  });
  return subscription;
}

const typeOf = (event: ExecutionResult<Event>) => event.data?.verificationJobChanged.__typename;

/** Starts a verification whose job stays pending, and answers its id. */
async function pendingJob(harness: Harness): Promise<string> {
  const { body } = await harness.execute<{
    verifyContractFromSource: { __typename: string; verificationId: string };
  }>(FROM_SOURCE, { input: sourceInput() });
  expect(body.data?.verifyContractFromSource.__typename).toBe('VerificationPending');
  return body.data?.verifyContractFromSource.verificationId ?? '';
}

describe('verificationJobChanged', () => {
  let harness: Harness;
  beforeEach(async () => {
    harness = await watching();
    used = harness;
  });

  it('sends each subscriber, over SSE and graphql-ws alike, the state on subscribe, the completed state once, then the end', async () => {
    harness.simulator.verification.setJobDelay(null);
    const id = await pendingJob(harness);
    const sse = await overSse(harness, id);
    const ws = overWs(harness, id);
    for (const subscriber of [sse, ws]) {
      const first = await subscriber.next();
      expect(first.data?.verificationJobChanged).toMatchObject({
        __typename: 'VerificationPending',
        stale: false,
        message: expect.stringContaining('still running'),
      });
    }
    harness.simulator.verification.setJobDelay(0);
    for (const subscriber of [sse, ws] as Received<ExecutionResult<Event>>[]) {
      await subscriber.completed;
      expect(subscriber.events.map(typeOf)).toEqual(['VerificationPending', 'VerificationResult']);
      expect(subscriber.events[1]?.data?.verificationJobChanged).toMatchObject({
        alreadyVerified: false,
        contracts: [{ status: 'PERFECT', name: GREETER.name }],
        job: { completed: true, compilationTimeMs: expect.any(Number) },
      });
    }
    expect(sse.completedByServer).toBe(true);
    // Ended because the job finished, not by its client.
    for (const transport of ['http', 'websocket']) {
      await eventually(
        async () =>
          (await harness.metric(
            `graphql_subscriptions_ended_total{field="verificationJobChanged",transport="${transport}",reason="complete"}`,
          )) >= 1,
      );
    }
  });

  it('starts a subscriber who joins a watch others share with the job as it stands', async () => {
    harness.simulator.verification.setJobDelay(null);
    const id = await pendingJob(harness);
    const first = await overSse(harness, id);
    await first.next();
    // The same request as the first's: it joins the subscription the first one holds.
    const late = await overSse(harness, id);
    expect(typeOf(await late.next())).toBe('VerificationPending');
    harness.simulator.verification.setJobDelay(0);
    for (const subscriber of [first, late]) {
      await subscriber.completed;
      expect(subscriber.events.map(typeOf)).toEqual(['VerificationPending', 'VerificationResult']);
    }
  });

  it('polls the job once per interval whoever watches it: ten subscribers, over both transports', async () => {
    harness.simulator.verification.setJobDelay(null);
    const id = await pendingJob(harness);
    harness.simulator.resetRequests();
    const socket = wsClient(harness.origin);
    closers.push(() => socket.dispose());
    const subscribers = [
      ...(await Promise.all(Array.from({ length: 5 }, () => overSse(harness, id)))),
      ...Array.from({ length: 5 }, () => overWs(harness, id, socket)),
    ];
    await Promise.all(subscribers.map((subscriber) => subscriber.next()));
    // Each poll takes a while: polls of their own per subscriber would overlap.
    const route = `/verify/v2/verify/${id}`;
    harness.simulator.concurrency(route);
    harness.simulator.setFault('verify', `/v2/verify/${id}`, { kind: 'delay', ms: 30 });
    harness.simulator.resetRequests();
    const from = Date.now();
    await eventually(() => harness.simulator.requestCount(route) >= 5);
    const polls = harness.simulator.requestCount(route);
    const intervals = Math.floor((Date.now() - from) / INTERVAL_MS);
    expect(harness.simulator.concurrency(route).peak).toBe(1);
    // At most one poll per interval, and one more for a poll counted at the window's edge (timers
    // fire late, never early: a busy machine polls less).
    expect(polls).toBeLessThanOrEqual(intervals + 2);
    harness.simulator.clearFaults();
    harness.simulator.verification.setJobDelay(0);
    await Promise.all(subscribers.map((subscriber) => subscriber.completed));
    for (const subscriber of subscribers) {
      expect(subscriber.events.map(typeOf)).toEqual(['VerificationPending', 'VerificationResult']);
    }
  });

  it.each([
    ['an id the service does not know', () => crypto.randomUUID()],
    ['an id that is not a job id', () => 'not-a-job'],
  ])('answers %s with one InvalidInputError on id, then the end', async (_case, idOf) => {
    const subscriber = await overSse(harness, idOf());
    await subscriber.completed;
    expect(subscriber.events.map((event) => event.data?.verificationJobChanged)).toEqual([
      expect.objectContaining({ __typename: 'InvalidInputError', field: 'id' }),
    ]);
  });
});

describe('a stuck job', () => {
  it('reports a stuck job stale with what the user can do, in the stream and in verificationJob alike, then its end', async () => {
    // Sourcify's job times are whole seconds: a job may look up to a second older than it is.
    const harness = await watching();
    used = harness;
    harness.simulator.verification.setOutcome(
      { chainId: GREETER.chainId, address: GREETER.address },
      { stuck: true },
    );
    const id = await pendingJob(harness);
    const subscriber = overWs(harness, id);
    expect((await subscriber.next()).data?.verificationJobChanged).toMatchObject({
      __typename: 'VerificationPending',
      stale: false,
    });
    const stale = (await subscriber.next(STALE_MS + 5_000)).data?.verificationJobChanged;
    expect(stale).toMatchObject({ __typename: 'VerificationPending', stale: true });
    expect(stale?.message).toContain('cannot be cancelled');
    expect(stale?.message).toContain('job_abandoned');
    const { body } = await harness.execute<{
      verificationJob: { __typename: string; stale: boolean; message: string };
    }>(JOB, { id });
    expect(body.data?.verificationJob).toEqual({
      __typename: 'VerificationPending',
      stale: true,
      message: expect.stringContaining('cannot be cancelled'),
    });
    // Sourcify's reaper gives the job up.
    harness.simulator.verification.abandonStuckJobs();
    await subscriber.completed;
    expect(subscriber.events.at(-1)?.data?.verificationJobChanged).toMatchObject({
      __typename: 'VerificationRejectedError',
      reason: 'JOB_ABANDONED',
    });
    expect(subscriber.events).toHaveLength(3);
  });
});

describe('verificationJobChanged and the subscription limits', () => {
  it('counts against MAX_SUBSCRIPTIONS_PER_CLIENT like every subscription', async () => {
    const harness = await watching();
    used = harness;
    harness.simulator.verification.setJobDelay(null);
    const id = await pendingJob(harness);
    // All the client may hold: each one starts.
    const held = await Promise.all(
      Array.from({ length: MAX_SUBSCRIPTIONS }, () => overSse(harness, id)),
    );
    for (const subscriber of held) {
      expect(typeOf(await subscriber.next())).toBe('VerificationPending');
    }
    const refused = await overSse(harness, id);
    expect((await refused.next()).errors?.[0]?.extensions).toMatchObject({
      code: 'TOO_MANY_SUBSCRIPTIONS',
      limit: 'MAX_SUBSCRIPTIONS_PER_CLIENT',
    });
  });

  // Ending with the gateway (the stream completes on shutdown) is asserted with the other streams'
  // ends, on the gateway that test/subscriptions/lifecycle.test.ts shuts down.
});
