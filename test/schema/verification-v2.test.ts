import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureContract } from '../../simulator/src/verification/fixture.js';
import { eventually } from '../helpers/eventually.js';
import type { Harness } from '../helpers/harness.js';
import { copyAt } from '../helpers/schema-contracts.js';
import { sharedHarnesses } from '../helpers/shared-harness.js';

const fixture = fixtureContract;
const WETH = fixture('WETH9'); // already verified and stored
const DAI = fixture('Dai');
const GREETER = fixture('Greeter');
const UNKNOWN = '0x000000000000000000000000000000000000dEaD';

const RESULT = /* GraphQL */ `
  __typename
  ... on Error { message }
  ... on InvalidInputError { field errorId }
  ... on VerificationRejectedError { status code errorId }
  ... on RateLimitedError { retryAfterSeconds errorId }
  ... on UpstreamUnavailableError { errorId }
  ... on VerificationPending { verificationId startedAt }
  ... on VerificationResult {
    alreadyVerified unused
    contracts { verificationId name compiledPath compilerVersion address chainId files { found } status storageTimestamp }
  }
`;
const VERIFY = `mutation ($input: VerifyContractInput!) { verifyContract(input: $input) { ${RESULT} } }`;
const JOB = `query ($id: ID!) { verificationJob(id: $id) { ${RESULT} } }`;

type Outcome = {
  __typename: string;
  message?: string;
  field?: string;
  status?: number;
  code?: string | null;
  errorId?: string | null;
  retryAfterSeconds?: number | null;
  verificationId?: string;
  startedAt?: string | null;
  alreadyVerified?: boolean;
  contracts?: {
    verificationId: string;
    name: string | null;
    compiledPath: string | null;
    address: string;
    chainId: string;
    files: null;
    status: string;
    storageTimestamp: string | null;
  }[];
};

/*
 * Two gateways for the file, each reset through the simulator before a test uses it: one for
 * every test that has the service's chain list, and one that never had it (a failed GET /chains is
 * answered from memory for 60 s), whose circuit opens at the first failure of the service.
 */
const shared = sharedHarnesses();
afterAll(() => shared.close());
const v2 = () =>
  shared.use({
    // Polls far enough apart for a test to make the service fail between the job's acceptance and
    // its first poll.
    env: { VERIFY_API: 'v2', VERIFY_WAIT_MS: 2_000, VERIFY_POLL_INTERVAL_MS: 200 },
  });

describe('verifyContract with VERIFY_API=v2', () => {
  let harness: Harness;
  beforeEach(async () => {
    harness = await v2();
  });

  const verify = async (input: Record<string, unknown>) =>
    (await harness.execute<{ verifyContract: Outcome }>(VERIFY, { input })).body;

  it('submits a job, polls it and maps the match honestly', async () => {
    const body = await verify({
      address: GREETER.address,
      chainId: GREETER.chainId,
      apiKey: 'k-1',
    });
    expect(body.errors).toBeUndefined();
    const result = body.data?.verifyContract;
    expect(result?.__typename).toBe('VerificationResult');
    expect(result?.alreadyVerified).toBe(false);
    const [contract] = result?.contracts ?? [];
    // APIv2's job reports the match only: name, path and compiler come from its contract lookup.
    expect(contract).toMatchObject({
      address: GREETER.address,
      chainId: GREETER.chainId,
      status: 'PERFECT',
      name: GREETER.name,
      compiledPath: GREETER.compiledPath,
      compilerVersion: GREETER.compilerVersion,
      files: null,
    });
    const lookups = harness.simulator.requests.filter((r) =>
      r.path.startsWith('/verify/v2/contract/'),
    );
    expect(lookups).toHaveLength(1);
    expect(new URLSearchParams(lookups[0]?.search).get('fields')).toBe(
      'compilation.name,compilation.compilerVersion,compilation.fullyQualifiedName',
    );
    expect(contract?.verificationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(contract?.storageTimestamp).toBeTruthy();
    const [received] = harness.simulator.verification.received;
    expect(received).toMatchObject({ api: 'v2', apiKey: 'k-1', address: GREETER.address });
    const polls = harness.simulator.requests.filter(
      (r) => r.path.startsWith('/verify/v2/verify/') && r.method === 'GET',
    );
    expect(polls.length).toBeGreaterThanOrEqual(1);
    expect(polls.length).toBeLessThan(40);
  });

  it('answers a contract that is already verified with the existing match, not an error', async () => {
    const result = (await verify({ address: WETH.address, chainId: WETH.chainId })).data
      ?.verifyContract;
    expect(result?.__typename).toBe('VerificationResult');
    expect(result?.alreadyVerified).toBe(true);
    expect(result?.contracts?.[0]).toMatchObject({
      address: WETH.address,
      status: 'PERFECT',
      name: WETH.name,
      compilerVersion: WETH.compilerVersion,
    });
  });

  it('answers VerificationPending when the job outlasts the wait, and verificationJob reports it later', async () => {
    harness.simulator.verification.setJobDelay(null);
    const pending = (await verify({ address: DAI.address, chainId: DAI.chainId })).data
      ?.verifyContract;
    expect(pending?.__typename).toBe('VerificationPending');
    expect(pending?.startedAt).toBeTruthy();
    const id = pending?.verificationId ?? '';

    const still = await harness.execute<{ verificationJob: Outcome }>(JOB, { id });
    expect(still.body.data?.verificationJob.__typename).toBe('VerificationPending');

    harness.simulator.verification.setJobDelay(0);
    const done = await harness.execute<{ verificationJob: Outcome }>(JOB, { id });
    expect(done.body.data?.verificationJob).toMatchObject({ __typename: 'VerificationResult' });
    expect(done.body.data?.verificationJob.contracts?.[0]?.verificationId).toBe(id);
  });

  it('answers null for a job id the service does not know', async () => {
    const { body } = await harness.execute(JOB, { id: '3f1b8e62-8d5a-4d39-9f55-3d6a7c1f0b2e' });
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({ verificationJob: null });
  });

  it.each([
    [
      'not_etherscan_verified',
      'VerificationRejectedError',
      { status: 404, code: 'not_etherscan_verified' },
    ],
    ['etherscan_limit', 'RateLimitedError', {}],
    ['duplicate_verification_request', 'RateLimitedError', {}],
    ['unsupported_chain', 'InvalidInputError', { field: 'chainId' }],
    ['etherscan_request_failed', 'UpstreamUnavailableError', {}],
    ['internal_error', 'UpstreamUnavailableError', {}],
  ] as const)('maps a %s rejection to %s, keeping its errorId', async (code, typename, fields) => {
    harness.simulator.verification.setOutcome('*', { reject: code });
    const result = (await verify({ address: GREETER.address, chainId: GREETER.chainId })).data
      ?.verifyContract;
    expect(result).toMatchObject({ __typename: typename, ...fields });
    expect(result?.errorId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result?.message).toBeTruthy();
  });

  it('refuses a deprecated chain (5) from the chain list; without a list, relays the 500 internal_error Sourcify answers', async () => {
    const refused = (await verify({ address: DAI.address, chainId: '5' })).data?.verifyContract;
    expect(refused).toMatchObject({ __typename: 'InvalidInputError', field: 'chainId' });
    expect(refused?.message).toBe(
      'Chain 5 is not supported by the verification service; see Query.supportedChains.',
    );

    const blind = await shared.use({ env: { VERIFY_API: 'v2', CIRCUIT_FAILURE_THRESHOLD: 1 } });
    blind.simulator.verification.setChains(null);
    const send = async () =>
      (
        await blind.execute<{ verifyContract: Outcome }>(VERIFY, {
          input: { address: DAI.address, chainId: '5' },
        })
      ).body.data?.verifyContract;
    const failed = await send();
    expect(failed).toEqual(
      expect.objectContaining({
        __typename: 'UpstreamUnavailableError',
        message: `The verification service POST /v2/verify/etherscan/5/${DAI.address} is unavailable: it failed with an internal error (internal_error): The server encountered an unexpected error.`,
        errorId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      }),
    );
    // Sourcify's own error: the circuit (threshold 1) stays closed.
    expect((await send())?.errorId).toBeTruthy();
    expect(blind.simulator.requestCount(`/verify/v2/verify/etherscan/5/${DAI.address}`)).toBe(2);
    // The failed GET /chains is remembered (for a minute at the default VERIFY_CHAINS_TTL_MS): one
    // request for both verifications.
    expect(blind.simulator.requestCount('/verify/chains')).toBe(1);
  });

  it('maps a failed job to VerificationRejectedError with its code', async () => {
    harness.simulator.verification.setOutcome('*', { jobError: 'no_match' });
    const result = (await verify({ address: GREETER.address, chainId: GREETER.chainId })).data
      ?.verifyContract;
    expect(result).toMatchObject({
      __typename: 'VerificationRejectedError',
      status: 422,
      code: 'no_match',
    });
    expect(result?.errorId).toBeTruthy();
  });

  it('answers a contract the explorer does not know as rejected', async () => {
    const result = (await verify({ address: UNKNOWN, chainId: '1' })).data?.verifyContract;
    expect(result).toMatchObject({
      __typename: 'VerificationRejectedError',
      code: 'not_etherscan_verified',
    });
  });

  it('answers the job id when polling fails after the job was accepted, so nothing is lost', async () => {
    harness.simulator.verification.setJobDelay(null);
    const answer = harness.execute<{ verifyContract: Outcome }>(VERIFY, {
      input: { address: GREETER.address, chainId: GREETER.chainId },
    });
    // Once the job is accepted, the service starts failing before the first poll.
    await eventually(() => harness.simulator.verification.jobs().length > 0, { intervalMs: 1 });
    harness.simulator.setFault('verify', '*', { kind: 'status', status: 503 });
    const result = (await answer).body.data?.verifyContract;
    expect(result?.__typename).toBe('VerificationPending');
    expect(result?.verificationId).toBe(harness.simulator.verification.jobs()[0]?.verificationId);
  });
});

describe('Query.contract and the Contract entity', () => {
  // Lookups are APIv2's whatever VERIFY_API says.
  let harness: Harness;
  beforeEach(async () => {
    harness = await v2();
  });

  it('looks up a verified contract, null for one that is not', async () => {
    const { body } = await harness.execute<{
      weth: {
        chainId: string;
        address: string;
        verified: boolean;
        match: string;
        verifiedAt: string;
        matchId: string;
        name: string;
        compilerVersion: string;
      };
      unknown: null;
    }>(`{
      weth: contract(chainId: "1", address: "${WETH.address}") { chainId address verified match runtimeMatch verifiedAt matchId name compilerVersion }
      unknown: contract(chainId: "1", address: "${UNKNOWN}") { verified }
    }`);
    expect(body.errors).toBeUndefined();
    expect(body.data?.weth).toMatchObject({
      chainId: '1',
      address: WETH.address,
      verified: true,
      match: 'PERFECT',
      name: 'WETH9',
      compilerVersion: WETH.compilerVersion,
    });
    expect(body.data?.weth.verifiedAt).toBeTruthy();
    expect(body.data?.unknown).toBeNull();
  });

  it("batches one operation's lookups and caches them briefly", async () => {
    // WETH9 and Dai at addresses of this test's own: lookups nobody made before.
    const weth = copyAt(WETH);
    const dai = copyAt(DAI);
    harness.simulator.verification.addContract(weth);
    harness.simulator.verification.addContract(dai);
    const query = `{
      a: contract(chainId: "1", address: "${weth.address}") { match }
      b: contract(chainId: "1", address: "${weth.address.toLowerCase()}") { match }
      c: contract(chainId: "1", address: "${dai.address}") { match }
    }`;
    await harness.execute(query);
    const lookups = () =>
      harness.simulator.requests.filter((r) => r.path.startsWith('/verify/v2/contract/')).length;
    expect(lookups()).toBe(2);
    await harness.execute(query);
    expect(lookups()).toBe(2);
  });

  it('refuses a malformed address with BAD_USER_INPUT, sending nothing', async () => {
    const { body } = await harness.execute('{ contract(chainId: "1", address: "0x12") { match } }');
    expect(body.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'address' });
    expect(harness.simulator.requestCount()).toBe(0);
  });

  it('resolves Contract representations, unverified ones as verified: false', async () => {
    const { body } = await harness.execute<{
      _entities: { address: string; verified: boolean; match: string | null }[];
    }>(
      `query ($r: [_Any!]!) { _entities(representations: $r) { ... on Contract { address verified match } } }`,
      {
        r: [
          { __typename: 'Contract', chainId: '1', address: WETH.address },
          { __typename: 'Contract', chainId: '1', address: UNKNOWN },
        ],
      },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?._entities).toEqual([
      { address: WETH.address, verified: true, match: 'PERFECT' },
      { address: UNKNOWN, verified: false, match: null },
    ]);
  });

  it('answers verificationJob with null under the session API', async () => {
    const { body } = await harness.execute(JOB, { id: '3f1b8e62-8d5a-4d39-9f55-3d6a7c1f0b2e' });
    expect(body.data).toEqual({ verificationJob: null });
  });
});
