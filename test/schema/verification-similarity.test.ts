import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureContract } from '../../simulator/src/verification/fixture.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { subscribeSse } from '../helpers/subscriptions.js';

/*
 * verifyContractBySimilarity against today's Sourcify (the simulator's default server): the same
 * result union, allowance, job stream and stale detection as the other ways to verify.
 */

const WETH = fixtureContract('WETH9');
const DAI = fixtureContract('Dai');
/** A copy of WETH9 (the same compilation) on Sepolia, not verified yet. */
const { storageTimestamp: _, ...WETH_COPY } = {
  ...WETH,
  chainId: '11155111',
  address: '0x7Bec3080cdf73a9a39997C860c19377Ac1E6E6BE',
};
const NOBODY = '0x0000000000000000000000000000000000000001';

const SIMILARITY = /* GraphQL */ `
  mutation ($input: VerifyBySimilarityInput!) {
    verifyContractBySimilarity(input: $input) {
      __typename
      ... on Error { message }
      ... on InvalidInputError { field }
      ... on VerificationRejectedError { status reason job { error { code } } }
      ... on VerificationPending { verificationId stale message }
      ... on VerificationResult { alreadyVerified contracts { name compilerVersion status address } }
    }
  }
`;

type Outcome = Record<string, unknown> & { __typename: string; message?: string };

let clients = 0;
/**
 * The `x-forwarded-for` of a client of its own (the gateway trusts one proxy): a new one for each
 * request, or per `test` one its requests share (named by the test). With one verification a
 * minute each (VERIFY_RATE_LIMIT 1), no test's verifications count against another's.
 */
function ownClient(per: 'request' | 'test' = 'request'): { 'x-forwarded-for': string } {
  clients += 1;
  const name = per === 'test' ? (expect.getState().currentTestName ?? '') : `request ${clients}`;
  return { 'x-forwarded-for': name.replaceAll(',', ';') };
}

const bySimilarity = async (
  harness: Harness,
  input: Record<string, unknown>,
  client = ownClient(),
) => {
  const { body } = await harness.execute<{ verifyContractBySimilarity: Outcome }>(
    SIMILARITY,
    { input },
    { headers: client },
  );
  expect(body.errors).toBeUndefined();
  return body.data?.verifyContractBySimilarity as Outcome;
};

/*
 * One gateway for the file, reset through the simulator before each test: one verification a
 * client a minute (VERIFY_RATE_LIMIT 1) behind one trusted proxy, each request a client of its own
 * (`ownClient`) but where a test's requests share one to spend its allowance.
 */
let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({
    env: {
      VERIFY_WAIT_MS: 1_000,
      VERIFY_POLL_INTERVAL_MS: 20,
      VERIFY_WATCH_INTERVAL_MS: 100,
      // Any job seen running is stale: Sourcify's job times are whole seconds.
      VERIFY_JOB_STALE_MS: 1,
      VERIFY_RATE_LIMIT: 1,
      TRUSTED_PROXIES: 1,
    },
  });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.simulator.verification.reset();
  harness.simulator.clearFaults();
  harness.simulator.resetRequests();
});

describe('verifyContractBySimilarity', () => {
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  it('verifies a copy of a verified contract, with the name and compiler looked up, sending the hash lowercase, as the service takes it', async () => {
    harness.simulator.verification.addContract(WETH_COPY);
    const result = await bySimilarity(harness, {
      chainId: WETH_COPY.chainId,
      address: WETH_COPY.address,
      creationTransactionHash: `0x${'AB'.repeat(32)}`,
    });
    expect(result).toEqual({
      __typename: 'VerificationResult',
      alreadyVerified: false,
      contracts: [
        {
          name: WETH.name,
          compilerVersion: WETH.compilerVersion,
          status: 'PERFECT',
          address: WETH_COPY.address,
        },
      ],
    });
    const [post] = harness.simulator.requests.filter((request) => request.method === 'POST');
    expect(post?.path).toBe(
      `/verify/v2/verify/similarity/${WETH_COPY.chainId}/${WETH_COPY.address}`,
    );
    // Accepted: the service's validator takes the hash in lowercase only (apiv2.yaml's Keccak256).
  });

  it('answers a job that finds nothing similar as VerificationRejectedError NO_SIMILAR_MATCH_FOUND with the job', async () => {
    expect(await bySimilarity(harness, { chainId: DAI.chainId, address: DAI.address })).toEqual({
      __typename: 'VerificationRejectedError',
      message: 'No similar verified contracts were found in the database.',
      status: 422,
      reason: 'NO_SIMILAR_MATCH_FOUND',
      job: { error: { code: 'no_similar_match_found' } },
    });
  });

  it('refuses bad input as the other ways do, before sending anything', async () => {
    const refusals = [
      [{ chainId: '1', address: '0x1234' }, 'address'],
      [{ chainId: 'one', address: DAI.address }, 'chainId'],
      [{ chainId: '424242', address: DAI.address }, 'chainId'],
      [
        { chainId: '1', address: DAI.address, creationTransactionHash: '0x12' },
        'creationTransactionHash',
      ],
    ] as const;
    for (const [input, field] of refusals) {
      expect(await bySimilarity(harness, input)).toMatchObject({
        __typename: 'InvalidInputError',
        field,
      });
    }
    expect(harness.simulator.requests.filter((request) => request.method === 'POST')).toEqual([]);
  });

  it("answers the service's refusals: no bytecode, its RPC failing, already verified, being verified", async () => {
    expect(await bySimilarity(harness, { chainId: '1', address: NOBODY })).toMatchObject({
      __typename: 'VerificationRejectedError',
      status: 404,
      reason: 'CANNOT_FETCH_BYTECODE',
      message: `There is no bytecode at address ${NOBODY} on chain 1.`,
    });
    harness.simulator.verification.setOutcome(
      { chainId: DAI.chainId, address: DAI.address },
      { reject: 'failed_to_get_bytecode' },
      { times: 1 },
    );
    expect(
      await bySimilarity(harness, { chainId: DAI.chainId, address: DAI.address }),
    ).toMatchObject({
      __typename: 'UpstreamUnavailableError',
      message: expect.stringContaining('Failed to get bytecode for chain 1'),
    });
    expect(
      await bySimilarity(harness, { chainId: WETH.chainId, address: WETH.address }),
    ).toMatchObject({
      __typename: 'VerificationResult',
      alreadyVerified: true,
    });
    harness.simulator.verification.setJobDelay(null);
    const running = await bySimilarity(harness, { chainId: DAI.chainId, address: DAI.address });
    expect(running.__typename).toBe('VerificationPending');
    const duplicate = await bySimilarity(harness, { chainId: DAI.chainId, address: DAI.address });
    expect(duplicate.__typename).toBe('RateLimitedError');
    // The service's sentence and the gateway's advice, each a sentence of its own.
    expect(duplicate.message).toMatch(
      /^Contract 0x[0-9a-fA-F]{40} on chain 1 is already being verified\. The service verifies a contract once at a time/,
    );
  });

  it('answers a job still running as stale VerificationPending, followed to its end by verificationJobChanged', async () => {
    harness.simulator.verification.setJobDelay(null);
    harness.simulator.verification.addContract(WETH_COPY);
    const pending = await bySimilarity(harness, {
      chainId: WETH_COPY.chainId,
      address: WETH_COPY.address,
    });
    expect(pending).toMatchObject({
      __typename: 'VerificationPending',
      stale: true,
      message: expect.stringContaining('longer than'),
    });
    const stream = await subscribeSse<{ verificationJobChanged: { __typename: string } }>(
      harness.origin,
      'subscription ($id: ID!) { verificationJobChanged(id: $id) { __typename ... on VerificationPending { stale } } }',
      { id: pending.verificationId },
    );
    closers.push(() => stream.close());
    expect((await stream.next()).data?.verificationJobChanged).toEqual({
      __typename: 'VerificationPending',
      stale: true,
    });
    harness.simulator.verification.setJobDelay(0);
    await stream.completed;
    expect(stream.events.at(-1)?.data?.verificationJobChanged.__typename).toBe(
      'VerificationResult',
    );
  });
});

describe('verifyContractBySimilarity against a server without APIv2', () => {
  it('answers UpstreamUnavailableError saying so, from the allowance the other ways share', async () => {
    // Similarity always speaks APIv2, whichever API the gateway found; the next reset brings it back.
    harness.simulator.verification.setServerVersion('session-only');
    const client = ownClient('test');
    const answer = await bySimilarity(
      harness,
      { chainId: DAI.chainId, address: DAI.address },
      client,
    );
    expect(answer.__typename).toBe('UpstreamUnavailableError');
    expect(answer.message).toContain('the server has no APIv2');
    const { body } = await harness.execute<{ verifyContract: Outcome }>(
      'mutation ($input: VerifyContractInput!) { verifyContract(input: $input) { __typename } }',
      { input: { chainId: WETH.chainId, address: WETH.address } },
      { headers: client },
    );
    expect(body.data?.verifyContract.__typename).toBe('RateLimitedError');
  });
});
