/**
 * verificationJobChanged on two replicas sharing one Redis: subscribers of one job on both
 * replicas cost one poll of the job per interval between them, and every one of them gets the
 * job's states and its end.
 */
import type { ExecutionResult } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import {
  REDIS_INSTALL_TIMEOUT_MS,
  type RedisServer,
  startRedisServer,
} from '../helpers/redis-server.js';
import { type Received, subscribeSse, subscribeWs, wsClient } from '../helpers/subscriptions.js';
import { sourceInput } from '../helpers/verification-inputs.js';

const INTERVAL_MS = 200;
const WATCH = `subscription ($id: ID!) { verificationJobChanged(id: $id) { __typename } }`;
type Event = { verificationJobChanged: { __typename: string } };

let redis: RedisServer;
let a: Harness;
let b: Harness;

beforeAll(async () => {
  redis = await startRedisServer();
  const env = {
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: 'verification-job-polls:',
    REDIS_COMMAND_TIMEOUT_MS: 2_000,
    VERIFY_WATCH_INTERVAL_MS: INTERVAL_MS,
    // No back-off: a poll every interval on each replica, so that only the sharing halves them (the
    // lease that follows a backed-off pause: test/upstreams/verification/redis-job-polls.test.ts).
    VERIFY_WATCH_MAX_INTERVAL_MS: INTERVAL_MS,
    VERIFY_WAIT_MS: 50,
  };
  a = await startHarness({ env, logLevel: 'warn' });
  // Both replicas in front of A's simulator.
  b = await startHarness({
    env: { ...env, VERIFY_BASE_URL: a.simulator.verifyBaseUrl },
    logLevel: 'warn',
  });
  for (const replica of [a, b]) {
    await eventually(async () => {
      const readiness = (await (await replica.fetch('/readiness')).json()) as {
        redis?: { state: string };
      };
      return readiness.redis?.state === 'connected';
    });
  }
}, REDIS_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await redis?.stop();
});

describe('a job watched on two replicas', () => {
  it('is polled once per interval between them, and every subscriber gets its states, then the end', async () => {
    a.simulator.verification.setJobDelay(null);
    const { body } = await a.execute<{
      verifyContractFromSource: { __typename: string; verificationId: string };
    }>(
      `mutation ($input: VerifyFromSourceInput!) {
        verifyContractFromSource(input: $input) { __typename ... on VerificationPending { verificationId } }
      }`,
      { input: sourceInput() },
    );
    const id = body.data?.verifyContractFromSource.verificationId ?? '';
    expect(id).not.toBe('');
    a.simulator.resetRequests();

    const socket = wsClient(b.origin);
    const subscribers: Received<ExecutionResult<Event>>[] = [
      await subscribeSse<Event>(a.origin, WATCH, { id }),
      await subscribeSse<Event>(b.origin, WATCH, { id }),
      subscribeWs<Event>(socket, WATCH, { id }),
      subscribeWs<Event>(socket, WATCH, { id }),
    ];
    await Promise.all(subscribers.map((subscriber) => subscriber.next()));
    const route = `/verify/v2/verify/${id}`;
    a.simulator.resetRequests();
    const from = Date.now();
    await eventually(() => a.simulator.requestCount(route) >= 8);
    const polls = a.simulator.requestCount(route);
    const intervals = Math.floor((Date.now() - from) / INTERVAL_MS);
    // Each replica polling on its own would poll twice per interval. A lease lasts one interval
    // (one more poll may be counted at the window's edge), and timers fire late, never early: a
    // busy machine polls less, not more.
    expect(polls).toBeLessThanOrEqual(intervals + 2);

    a.simulator.verification.setJobDelay(0);
    await Promise.all(subscribers.map((subscriber) => subscriber.completed));
    for (const subscriber of subscribers) {
      expect(
        subscriber.events.map((event) => event.data?.verificationJobChanged.__typename),
      ).toEqual(['VerificationPending', 'VerificationResult']);
    }
    await Promise.all(subscribers.map((subscriber) => subscriber.close()));
    await socket.dispose();
  });
});
