import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureContract } from '../../../simulator/src/verification/fixture.js';
import { fileClock } from '../../helpers/clock.js';
import type { Harness } from '../../helpers/harness.js';
import { sharedHarnesses } from '../../helpers/shared-harness.js';

/*
 * What real Sourcify servers answer where their versions differ, and where they have no route:
 * sourcify-server 3.9.1 (the last with the session API; APIv2's unsupported_chain is 404), 3.12.1
 * (APIv2 only; unsupported_chain is 400), and a server without APIv2 at all.
 */

const WETH = fixtureContract('WETH9');
const DAI = fixtureContract('Dai');
const UNKNOWN = '0x000000000000000000000000000000000000dEaD';
const UNASKED = '0x000000000000000000000000000000000000bEEF';

const JOB = /* GraphQL */ `
  query ($id: ID!) {
    verificationJob(id: $id) {
      __typename
      ... on Error { message }
      ... on InvalidInputError { field errorId }
    }
  }
`;

/** Express's page for a request no route takes, as a server without APIv2 answers. */
const expressNotFound = (method: string, path: string) => ({
  kind: 'status' as const,
  status: 404,
  headers: { 'content-type': 'text/html; charset=utf-8' },
  body: `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot ${method} ${path}</pre>\n</body>\n</html>\n`,
});

/*
 * One gateway, speaking APIv2, whose circuit opens at the first failure for a minute, with two
 * retries (Sourcify's own 500 is not retried however many are allowed). The test that opens its
 * circuit leaves it open: each test starts on a clock moved past its cool-down, and its probe (a
 * job nobody has) closes it again. VERIFY_API=session against servers without the session API is
 * tested on a gateway set so, in explorer-failures.test.ts.
 */
const clock = fileClock();
const shared = sharedHarnesses();
const RETRIES = 2;
const V2 = {
  env: {
    CIRCUIT_FAILURE_THRESHOLD: 1,
    CIRCUIT_COOLDOWN_MS: 60_000,
    VERIFY_API: 'v2',
    UPSTREAM_RETRIES: RETRIES,
  },
} as const;
beforeEach(() => clock.advance(60 * 60_000));
afterAll(() => shared.close());

let harness: Harness;
/** The APIv2 gateway, its circuit closed, its counts reset. */
async function useV2(): Promise<Harness> {
  const v2 = await shared.use(V2);
  await v2.execute(JOB, { id: crypto.randomUUID() });
  v2.simulator.resetRequests();
  return v2;
}

const lookup = (chainId: string, address: string) =>
  harness.execute<{ contract: { verified: boolean } | null }>(
    `{ contract(chainId: "${chainId}", address: "${address}") { verified } }`,
  );

describe('Query.contract', () => {
  it.each([
    ['3.9.1', 404],
    ['3.12.1', 400],
  ] as const)(
    'refuses an unknown chain on sourcify-server %s (HTTP %i) as BAD_USER_INPUT on chainId',
    async (version, status) => {
      harness = await useV2();
      harness.simulator.verification.setServerVersion(version);
      const { body } = await lookup('999999', WETH.address);
      expect(body.data?.contract).toBeNull();
      expect(body.errors).toHaveLength(1);
      expect(body.errors?.[0]).toMatchObject({
        message: 'Chain 999999 not found',
        path: ['contract'],
        extensions: { code: 'BAD_USER_INPUT', field: 'chainId' },
      });
      const [request] = harness.simulator.requests.filter((r) => r.path.startsWith('/verify/v2/'));
      expect(request?.path).toBe(`/verify/v2/contract/999999/${WETH.address}`);
      // The form the gateway was given.
      const upstream = await fetch(`${harness.simulator.verifyBaseUrl}${request?.path.slice(7)}`);
      expect(upstream.status).toBe(status);
      expect(await upstream.json()).toMatchObject({ customCode: 'unsupported_chain' });
    },
  );

  it('answers null, without an error, for a contract that is not verified (404 with null matches)', async () => {
    harness = await useV2();
    harness.simulator.verification.setServerVersion('3.9.1');
    const { body } = await lookup('1', UNKNOWN);
    expect(body.errors).toBeUndefined();
    expect(body.data?.contract).toBeNull();
  });

  it('says the server has no APIv2 when it answers an HTML 404 page, rather than "not verified"', async () => {
    harness = await useV2();
    harness.simulator.setFault('verify', `/v2/contract/1/${WETH.address}`, {
      ...expressNotFound('GET', `/v2/contract/1/${WETH.address}`),
    });
    const { body } = await lookup('1', WETH.address);
    expect(body.data?.contract).toBeNull();
    expect(body.errors?.[0]?.extensions).toEqual({
      code: 'UPSTREAM_UNAVAILABLE',
      upstream: 'verification service',
    });
    expect(body.errors?.[0]?.message).toBe(
      `The verification service GET /v2/contract/1/${WETH.address} is unavailable: it has no such route (HTTP 404 page): the server has no APIv2, which the gateway needs for this. Point VERIFY_BASE_URL at a Sourcify server that has APIv2.`,
    );
  });

  it('explains the 500 internal_error Sourcify answers on a deprecated chain, and does not open the circuit for it', async () => {
    harness = await useV2();
    for (let i = 0; i < 2; i += 1) {
      const { body } = await lookup('5', DAI.address);
      expect(body.data?.contract).toBeNull();
      expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(body.errors?.[0]?.message).toBe(
        `The verification service GET /v2/contract/5/${DAI.address} is unavailable: it failed with an internal error (internal_error: "The server encountered an unexpected error.") on chain 5 (Goerli), which it lists as unsupported: Sourcify fails this way on the chains it has deprecated.`,
      );
    }
    // Sourcify's own error is not retried (no use: one request per lookup, with 2 retries allowed)
    // and not counted: after two of them, with a threshold of 1, the service still answers.
    expect(harness.simulator.requestCount(`/verify/v2/contract/5/${DAI.address}`)).toBe(2);
    const ok = await lookup('1', WETH.address);
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data?.contract?.verified).toBe(true);
  });

  it("still counts a 5xx without Sourcify's own error body toward the circuit", async () => {
    harness = await useV2();
    harness.simulator.setFault(
      'verify',
      '*',
      { kind: 'status', status: 500, body: '' },
      // The first request and its retries: one failure.
      { times: 1 + RETRIES },
    );
    await lookup('1', DAI.address);
    // A contract no other test looks up, whose answer no lookup cache holds.
    const refused = await lookup('1', UNASKED);
    expect(refused.body.errors?.[0]?.message).toMatch(/waits 60 s before asking again/);
    expect(harness.simulator.requestCount(`/verify/v2/contract/1/${UNASKED}`)).toBe(0);
  });
});

describe('Query.verificationJob', () => {
  it('answers null for an id the service does not know (404 job_not_found)', async () => {
    harness = await useV2();
    const { body } = await harness.execute(JOB, { id: crypto.randomUUID() });
    expect(body).toEqual({ data: { verificationJob: null } });
  });

  it('refuses an id that is not a job id (the service gives UUIDs) as InvalidInputError on id, before asking', async () => {
    harness = await useV2();
    const { body } = await harness.execute<{
      verificationJob: { __typename: string; field: string; message: string; errorId: string };
    }>(JOB, { id: 'not-a-job' });
    expect(body.errors).toBeUndefined();
    expect(body.data?.verificationJob).toMatchObject({
      __typename: 'InvalidInputError',
      field: 'id',
      errorId: null,
    });
    expect(body.data?.verificationJob.message).toMatch(/^id is not a verification job id/);
    expect(harness.simulator.requestCount()).toBe(0);
  });

  it('says the server has no APIv2 when the job route is an HTML 404 page', async () => {
    harness = await useV2();
    const id = crypto.randomUUID();
    harness.simulator.setFault(
      'verify',
      `/v2/verify/${id}`,
      expressNotFound('GET', `/v2/verify/${id}`),
    );
    const { body } = await harness.execute<{
      verificationJob: { __typename: string; message: string };
    }>(JOB, { id });
    expect(body.data?.verificationJob.__typename).toBe('UpstreamUnavailableError');
    expect(body.data?.verificationJob.message).toContain('the server has no APIv2');
  });
});
