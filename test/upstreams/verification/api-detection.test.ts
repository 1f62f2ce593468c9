import { afterAll, describe, expect, it } from 'vitest';
import type { SourcifyServerVersion } from '../../../simulator/src/server.js';
import { fixtureContract } from '../../../simulator/src/verification/fixture.js';
import { PROBE_PATH } from '../../../src/upstreams/verification/api-detection.js';
import type { VerifyApi } from '../../../src/upstreams/verification/model.js';
import { eventually } from '../../helpers/eventually.js';
import type { Harness } from '../../helpers/harness.js';
import { sharedHarnesses } from '../../helpers/shared-harness.js';

/*
 * With no VERIFY_API set (`auto`, the default) the gateway asks the server which API it speaks,
 * once, remembers it, and asks again after a failure: it works against today's Sourcify (APIv2
 * only), a server with both APIs (3.9.1) and a server from before APIv2 (session API only).
 * VERIFY_API set to one API is tested on the gateways of explorer-failures.test.ts, set so.
 */

const DAI = fixtureContract('Dai');
const GREETER = fixtureContract('Greeter');
const PROBE = `/verify${PROBE_PATH}`;

const VERIFY = /* GraphQL */ `
  mutation ($input: VerifyContractInput!) {
    verifyContract(input: $input) {
      __typename
      ... on Error { message }
      ... on VerificationResult { contracts { address status files { found } } job { completed } }
    }
  }
`;
type Outcome = {
  __typename: string;
  message?: string;
  contracts?: { address: string; status: string; files: { found: string[] } | null }[];
  job?: { completed: boolean } | null;
};

/*
 * One gateway, of `auto`, that the tests share, which each starts where the test
 * needs its detection (`spokeAndForgot`): knowing no API, so that its next call asks the server,
 * and having last spoken another API than the one the test's server speaks, so that it says what
 * it finds. Its settings are those of every test of it: a wait for the job and a poll interval
 * that see a verification through, no retries (the probe's failure answered at once), and a
 * second's cool-down for a service that does not answer.
 */
const shared = sharedHarnesses();
const AUTO = {
  env: {
    VERIFY_WAIT_MS: 3_000,
    VERIFY_POLL_INTERVAL_MS: 20,
    UPSTREAM_RETRIES: 0,
    CIRCUIT_COOLDOWN_MS: 1_000,
  },
} as const;
afterAll(() => shared.close());

let harness: Harness;
/** Where the test's lines start in `harness.logs`. */
let logged = 0;

const verify = async (contract = DAI) => {
  const response = await harness.execute<{ verifyContract: Outcome }>(VERIFY, {
    input: { address: contract.address, chainId: contract.chainId },
  });
  return { outcome: response.body.data?.verifyContract, headers: response.headers };
};
const told = () =>
  harness.logs
    .slice(logged)
    .filter((line) => String(line.msg).includes('(VERIFY_API=auto)'))
    .map((l) => l.msg);

/** A server that speaks only `api`. */
const ERA: Record<VerifyApi, SourcifyServerVersion> = { v2: 'latest', session: 'session-only' };
/** Verified while the detection is put where a test needs it, never by a test. */
const PRIMER = fixtureContract('FiatTokenProxy');

/**
 * The `auto` gateway, its detection having last spoken `previous` and knowing no API now, its
 * simulator as it started, its counts and lines the test's own. A server of `previous`'s era is
 * asked twice (a call in the other API fails first, which forgets it; then the server is asked),
 * then a server of the other era answers a call in `previous` with Express's 404 page, which
 * forgets it again.
 */
async function spokeAndForgot(previous: VerifyApi): Promise<void> {
  harness = await shared.use(AUTO);
  const { verification } = harness.simulator;
  verification.setJobDelay(0);
  verification.setServerVersion(ERA[previous]);
  await verify(PRIMER);
  await verify(PRIMER);
  verification.setServerVersion(ERA[previous === 'v2' ? 'session' : 'v2']);
  await verify(PRIMER);
  verification.reset();
  harness.simulator.resetRequests();
  logged = harness.logs.length;
}

describe('VERIFY_API unset (auto)', () => {
  it.each([
    ['latest', 'v2'],
    ['3.12.1', 'v2'],
    ['3.9.1', 'v2'],
    ['session-only', 'session'],
  ] as [SourcifyServerVersion, 'v2' | 'session'][])(
    'verifies against a %s server, in its %s API, asking once',
    async (version, api) => {
      await spokeAndForgot(api === 'v2' ? 'session' : 'v2');
      harness.simulator.verification.setServerVersion(version);
      const first = await verify(DAI);
      expect(first.outcome?.__typename).toBe('VerificationResult');
      const second = await verify(GREETER);
      expect(second.outcome?.__typename).toBe('VerificationResult');
      expect(harness.simulator.requestCount(PROBE)).toBe(1);
      const [received] = harness.simulator.verification.received;
      if (api === 'v2') {
        expect(received?.api).toBe('v2');
        expect(first.outcome?.job?.completed).toBe(true);
        expect(told()).toEqual(['verification service speaks APIv2 (VERIFY_API=auto)']);
      } else {
        expect(received?.api).toBeUndefined();
        expect(first.outcome?.contracts?.[0]?.files?.found).toContain(DAI.compiledPath);
        expect(first.headers.get('set-cookie')).toContain('verify_session=');
        expect(told()).toEqual([
          'verification service has no APIv2: using its session API (VERIFY_API=auto)',
        ]);
      }
    },
  );

  it('asks again after a failure: a server replaced by one of another era is spoken to in its API', async () => {
    await spokeAndForgot('v2');
    expect((await verify(DAI)).outcome?.__typename).toBe('VerificationResult');
    // The same URL now serves a server from before APIv2.
    harness.simulator.verification.setServerVersion('session-only');
    const failed = (await verify(GREETER)).outcome;
    expect(failed?.__typename).toBe('UpstreamUnavailableError');
    expect(failed?.message).toContain('the server has no APIv2');
    const again = await verify(GREETER);
    expect(again.outcome?.__typename).toBe('VerificationResult');
    expect(again.headers.get('set-cookie')).toContain('verify_session=');
    expect(harness.simulator.requestCount(PROBE)).toBe(2);
    expect(
      harness.logs.slice(logged).some((line) => line.level === 40 && line.api === 'session'),
    ).toBe(true);
  });

  it('answers the probe failing as UpstreamUnavailableError, and asks again next time', async () => {
    await spokeAndForgot('v2');
    harness.simulator.setFault('verify', PROBE_PATH, { kind: 'status', status: 503 }, { times: 1 });
    expect((await verify(DAI)).outcome?.__typename).toBe('UpstreamUnavailableError');
    expect((await verify(DAI)).outcome?.__typename).toBe('VerificationResult');
    expect(harness.simulator.requestCount(PROBE)).toBe(2);
  });
});

describe('VERIFY_API unset (auto), the service down', () => {
  it('says so in the terms of VERIFY_BASE_URL, and asks once per CIRCUIT_COOLDOWN_MS, not on every call', async () => {
    await spokeAndForgot('v2');
    harness.simulator.setFault('verify', '*', { kind: 'reset' });
    const first = (await verify(DAI)).outcome;
    expect(first).toEqual({
      __typename: 'UpstreamUnavailableError',
      message: 'The verification service at VERIFY_BASE_URL is unreachable: the connection failed.',
    });
    const second = (await verify(DAI)).outcome;
    expect(second?.__typename).toBe('UpstreamUnavailableError');
    expect(second?.message).toMatch(
      /^The verification service at VERIFY_BASE_URL is unreachable: the connection failed; the gateway asks it again in 1 s\.$/,
    );
    expect(harness.simulator.requestCount(PROBE)).toBe(1);
    const unreachable = harness.logs
      .slice(logged)
      .filter((line) => String(line.msg).includes('unreachable at'));
    expect(unreachable).toHaveLength(1);
    expect(unreachable[0]?.msg).toContain(`unreachable at ${harness.simulator.verifyBaseUrl}`);
    harness.simulator.clearFaults();
    const recovered = await eventually(async () => {
      const { outcome } = await verify(DAI);
      return outcome?.__typename === 'VerificationResult' && outcome;
    });
    expect(recovered).toBeTruthy();
    expect(harness.simulator.requestCount(PROBE)).toBe(2);
  });
});
