import { randomBytes } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { fileClock } from '../helpers/clock.js';
import { eventually } from '../helpers/eventually.js';
import type { Harness } from '../helpers/harness.js';
import { untilPagesLetGo } from '../helpers/own-pages.js';
import { sessionEra } from '../helpers/session-era.js';
import { sharedHarnesses } from '../helpers/shared-harness.js';

const SUMMARY = '/status/api/v2/summary.json';
const VERIFY = '/verify/session/verify/etherscan';
const MUTATION = `mutation { verifyContract(input: { address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", chainId: "1" }) { __typename ... on Error { message } } }`;

interface Page {
  statusPage: { name: string; stale: boolean; fetchedAt: string };
}

/*
 * One gateway for the file: its circuits open at the second failure in a row for a minute, and a
 * GET is retried twice (a 429 is not; a POST never is). Each test starts on a clock moved past
 * every cool-down, each circuit letting its next request through, with a gateway that has let its
 * pages go (STATUS_PAGE_IDLE_MS, on that clock, which stands still during a test): it holds
 * nothing of the feed, not even what a refetch of the test before brought. It speaks the session
 * API: APIv2's verifications wait for their job by that clock.
 */
const clock = fileClock();
const shared = sharedHarnesses();
type Options = Parameters<typeof shared.use>[0];
const RETRIES = 2;
const COOLDOWN_MS = 60_000;
const GATEWAY = sessionEra({
  env: {
    STATUS_PAGE_IDLE_MS: 1,
    STATUS_CACHE_TTL_MS: 0,
    CIRCUIT_FAILURE_THRESHOLD: 2,
    CIRCUIT_COOLDOWN_MS: COOLDOWN_MS,
    UPSTREAM_RETRIES: RETRIES,
  },
}) as Options;
/** Requests to the feed in one failing read: the first and its retries. */
const ATTEMPTS = 1 + RETRIES;
beforeEach(() => clock.advance(60 * 60_000));
afterAll(() => shared.close());

/**
 * The gateway, its circuits closed, once it holds no page. A circuit a test before opened is
 * half-open on the moved clock, refusing all but one request: a read of the feed and a lookup of a
 * contract nobody verified (a new one each time, past the lookup cache) are the probes that close
 * the feed's and the verification service's; what the read brought is let go.
 */
async function use(): Promise<Harness> {
  const harness = await shared.use(GATEWAY);
  const { body } = await harness.execute(
    `{ statusPage { name } contract(chainId: "1", address: "0x${randomBytes(20).toString('hex')}") { verified } }`,
  );
  expect(body.errors).toBeUndefined();
  clock.advance(1);
  await untilPagesLetGo(harness);
  return harness;
}

describe('circuit breakers', () => {
  let harness: Harness;

  it('stop asking a failing status feed and serve the last good snapshot, marked stale', async () => {
    harness = await use();
    const logged = harness.logs.length;
    const fresh = await harness.execute<Page>('{ statusPage { name stale fetchedAt } }');
    expect(fresh.body.data?.statusPage.stale).toBe(false);

    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    // Each read answers at once from the last snapshot and starts a refetch when none runs: two
    // failing refetches (each with its retries) open the circuit.
    const snapshot = {
      name: fresh.body.data?.statusPage.name,
      fetchedAt: fresh.body.data?.statusPage.fetchedAt,
    };
    const open = () =>
      harness.logs.slice(logged).some((line) => line.msg === 'upstream circuit open');
    await eventually(async () => {
      const { body } = await harness.execute<Page>('{ statusPage { name stale fetchedAt } }');
      expect(body.errors).toBeUndefined();
      expect(body.data?.statusPage).toMatchObject(snapshot);
      return open();
    });
    for (let i = 0; i < 5; i += 1) {
      const { body } = await harness.executeAfterRefetch<Page>(
        '{ statusPage { name stale fetchedAt } }',
      );
      expect(body.errors).toBeUndefined();
      expect(body.data?.statusPage).toEqual({ ...fresh.body.data?.statusPage, stale: true });
    }
    // The reads after it never reached the feed.
    expect(harness.simulator.requestCount(SUMMARY)).toBe(1 + 2 * ATTEMPTS);
  });

  it('probe the feed again after the cool-down and close when it answers', async () => {
    harness = await use();
    const logged = harness.logs.length;
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    // Two failures in a row open it.
    for (let i = 0; i < 2; i += 1) {
      const failed = await harness.execute('{ statusPage { name } }');
      expect(failed.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    }
    const fast = await harness.execute('{ statusPage { name } }');
    expect(fast.body.errors?.[0]?.message).toMatch(/waits 60 s before asking again/);
    expect(harness.simulator.requestCount(SUMMARY)).toBe(2 * ATTEMPTS);

    harness.simulator.clearFaults();
    clock.advance(COOLDOWN_MS);
    const healed = await harness.execute<Page>('{ statusPage { name stale } }');
    expect(healed.body.data?.statusPage.stale).toBe(false);
    expect(harness.logs.slice(logged).some((line) => line.msg === 'upstream circuit closed')).toBe(
      true,
    );
  });

  it('make verification fail fast while its upstream is down', async () => {
    harness = await use();
    harness.simulator.setFault('verify', '/session/verify/etherscan', {
      kind: 'status',
      status: 500,
    });
    for (let i = 0; i < 4; i += 1) {
      const { body } = await harness.execute<{
        verifyContract: { __typename: string; message: string };
      }>(MUTATION);
      expect(body.data?.verifyContract.__typename).toBe('UpstreamUnavailableError');
    }
    expect(harness.simulator.requestCount(VERIFY)).toBe(2);
  });

  it("count a 503 from verification even with Sourcify's own body, never its 502 about Etherscan", async () => {
    harness = await use();
    // Etherscan unreachable behind the service: relayed, not the service failing.
    harness.simulator.verification.setEtherscanFailure('unreachable', { times: 3 });
    for (let i = 0; i < 3; i += 1) await harness.execute(MUTATION);
    expect(harness.simulator.requestCount(VERIFY)).toBe(3);

    // Sourcify's v1 brownout: 503 with its own JSON error. The service is refusing work.
    const brownout = {
      error: 'Service Unavailable - API v1 Brownout',
      message: 'API v1 is temporarily unavailable.',
    };
    harness.simulator.setFault('verify', '/session/verify/etherscan', {
      kind: 'status',
      status: 503,
      body: JSON.stringify(brownout),
    });
    for (let i = 0; i < 3; i += 1) {
      const { body } = await harness.execute<{
        verifyContract: { __typename: string; message: string };
      }>(MUTATION);
      expect(body.data?.verifyContract.__typename).toBe('UpstreamUnavailableError');
    }
    expect(harness.simulator.requestCount(VERIFY)).toBe(5);
  });
});

describe('one upstream down', () => {
  let harness: Harness;

  it('leaves the status graph working while verification is down', async () => {
    harness = await use();
    harness.simulator.setFault('verify', '*', { kind: 'hang' });
    const verify = harness.execute<{ verifyContract: { __typename: string } }>(MUTATION);
    const status = await harness.execute<Page>('{ statusPage { name stale } }');
    expect(status.body.errors).toBeUndefined();
    expect(status.body.data?.statusPage.stale).toBe(false);
    expect((await verify).body.data?.verifyContract.__typename).toBe('UpstreamUnavailableError');
    const again = await harness.execute<Page>('{ statusPage { name } }');
    expect(again.body.errors).toBeUndefined();
  });

  it('leaves verification working while the status feed is down', async () => {
    harness = await use();
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    const status = await harness.execute('{ statusPage { name } }');
    expect(status.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    const { body } = await harness.execute<{ verifyContract: { __typename: string } }>(MUTATION);
    expect(body.data?.verifyContract.__typename).toBe('VerificationResult');
  });

  it('answers a 429 from the status feed as UPSTREAM_UNAVAILABLE without retrying it', async () => {
    harness = await use();
    harness.simulator.setFault('status', '/summary.json', {
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '30' },
    });
    const { body } = await harness.execute('{ statusPage { name } }');
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(body.errors?.[0]?.message).toContain('HTTP 429');
    expect(harness.simulator.requestCount(SUMMARY)).toBe(1);
  });
});
