/**
 * One client watching many verification jobs that never complete: all watches together poll the
 * service at most `VERIFY_WATCH_MAX_POLLS_PER_SECOND` times a second, each job in turn, and every
 * subscriber, another client's too, still gets each change of its job.
 */
import { randomBytes } from 'node:crypto';
import type { ExecutionResult } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureContract } from '../../simulator/src/verification/fixture.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { subscribeSse, subscribeWs, wsClient } from '../helpers/subscriptions.js';
import { sourceInput } from '../helpers/verification-inputs.js';

const BUDGET = 10;
const JOBS = 8;
const INTERVAL_MS = 100;
const GREETER = fixtureContract('Greeter');

const WATCH = `subscription ($id: ID!) { verificationJobChanged(id: $id) { __typename } }`;
const FROM_SOURCE = `mutation ($input: VerifyFromSourceInput!) {
  verifyContractFromSource(input: $input) { __typename ... on VerificationPending { verificationId } }
}`;
type Event = { verificationJobChanged: { __typename: string } };
const typeOf = (event: ExecutionResult<Event>) => event.data?.verificationJobChanged.__typename;

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({
    env: {
      VERIFY_WATCH_MAX_POLLS_PER_SECOND: BUDGET,
      // No back-off: every job wants a poll every 100 ms, 100 a second between them, so that
      // only the budget bounds what the service sees.
      VERIFY_WATCH_INTERVAL_MS: INTERVAL_MS,
      VERIFY_WATCH_MAX_INTERVAL_MS: INTERVAL_MS,
      VERIFY_WAIT_MS: 50,
      VERIFY_POLL_INTERVAL_MS: 10,
      VERIFY_RATE_LIMIT: JOBS + 1,
      // Two clients, as a proxy in front of the gateway tells them apart.
      TRUSTED_PROXIES: 1,
    },
    logLevel: 'warn',
  });
});
afterAll(() => harness?.close());

/** A verification whose job stays pending (jobs are held), of a contract of its own; its id. */
async function pendingJob(): Promise<string> {
  const address = `0x${randomBytes(20).toString('hex')}`;
  const { body } = await harness.execute<{
    verifyContractFromSource: { __typename: string; verificationId: string };
  }>(FROM_SOURCE, { input: sourceInput(GREETER, { address }) });
  expect(body.data?.verifyContractFromSource.__typename).toBe('VerificationPending');
  return body.data?.verifyContractFromSource.verificationId ?? '';
}

describe('watched verification jobs that never complete', () => {
  it('cost at most the budget of polls, every job polled in turn, and every subscriber gets each change', async () => {
    harness.simulator.verification.setJobDelay(null);
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i += 1) ids.push(await pendingJob());
    const [otherId = '', ...manyIds] = ids;
    const socket = wsClient(harness.origin, { headers: { 'x-forwarded-for': '203.0.113.1' } });
    const many = manyIds.map((id) => subscribeWs<Event>(socket, WATCH, { id }));
    // Another client's one job.
    const other = await subscribeSse<Event>(
      harness.origin,
      WATCH,
      { id: otherId },
      { headers: { 'x-forwarded-for': '198.51.100.2' } },
    );
    const subscribers = [...many, other];
    for (const subscriber of subscribers) {
      expect(typeOf(await subscriber.next())).toBe('VerificationPending');
    }
    expect(await harness.metric('verification_jobs_watched')).toBe(JOBS);

    const routes = ids.map((id) => `/verify/v2/verify/${id}`);
    const polls = () =>
      routes.reduce((sum, route) => sum + harness.simulator.requestCount(route), 0);
    harness.simulator.resetRequests();
    const from = performance.now();
    // Each job twice: none is starved by the others.
    await eventually(() => routes.every((route) => harness.simulator.requestCount(route) >= 2));
    const polled = polls();
    const seconds = (performance.now() - from) / 1000;
    // Unbudgeted, the jobs would have been polled JOBS times per interval.
    expect((JOBS * seconds * 1000) / INTERVAL_MS).toBeGreaterThan(3 * polled);
    // One poll per 1/BUDGET s at most, and one more sent before the count began.
    expect(polled).toBeLessThanOrEqual(BUDGET * seconds + 2);
    expect(await harness.metric('verification_job_poll_delay_seconds_count')).toBeGreaterThan(0);

    // The jobs complete: every subscriber gets the completed state, then the end.
    harness.simulator.verification.setJobDelay(0);
    await Promise.all(subscribers.map((subscriber) => subscriber.completed));
    for (const subscriber of subscribers) {
      const types = subscriber.events.map(typeOf);
      expect(types).toHaveLength(2);
      expect(types[0]).toBe('VerificationPending');
      expect(types[1]).not.toBe('VerificationPending');
    }
    await eventually(async () => (await harness.metric('verification_jobs_watched')) === 0);
    await socket.dispose();
  });
});
