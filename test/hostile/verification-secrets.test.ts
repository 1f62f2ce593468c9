import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { type Harness, startHarness } from '../helpers/harness.js';

// Shaped like an Etherscan key: 34 capital letters and digits.
const API_KEY = 'K7QX2M9VD4HB8NRT3WZJ5FPC6LYG1SEA0U';
const contract = VERIFIABLE_CONTRACTS.find((candidate) => candidate.name === 'Greeter');
const input = { address: contract?.address, chainId: contract?.chainId, apiKey: API_KEY };

const forms = {
  exact: API_KEY,
  'lower-cased': API_KEY.toLowerCase(),
  'URL-encoded in a query': `apikey=${encodeURIComponent(API_KEY)}`,
  base64: Buffer.from(API_KEY).toString('base64'),
  'cut short': API_KEY.slice(0, 12),
};

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({
    env: { VERIFY_API: 'v2', VERIFY_POLL_INTERVAL_MS: 10, VERIFY_WAIT_MS: 300 },
  });
});
afterEach(() => harness.simulator.clearFaults());
afterAll(() => harness.close());

describe('the apiKey in every form an upstream could echo it in', () => {
  it.each(Object.entries(forms))('is cut from verifyContract answers: %s', async (_form, echo) => {
    harness.simulator.verification.setOutcome('*', {
      reject: 'etherscan_request_failed',
      message: `Etherscan said: ${echo} (Result message: NOTOK)`,
    });
    const { body } = await harness.execute(
      `mutation ($input: VerifyContractInput!) {
        verifyContract(input: $input) { __typename ... on Error { message } }
      }`,
      { input },
    );
    harness.simulator.verification.setOutcome('*', null);
    const text = JSON.stringify(body);
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(echo);
  });

  it('is cut from verificationJob, which does not know the key, where the job echoes it', async () => {
    harness.simulator.verification.setOutcome('*', {
      jobError: 'no_match',
      message: `Compiled with key ${API_KEY}: no match`,
    });
    harness.simulator.verification.setJobDelay(null);
    const started = await harness.execute<{
      verifyContract: { __typename: string; verificationId: string };
    }>(
      `mutation ($input: VerifyContractInput!) {
        verifyContract(input: $input) { __typename ... on VerificationPending { verificationId } }
      }`,
      { input },
    );
    const id = started.body.data?.verifyContract.verificationId;
    harness.simulator.verification.setJobDelay(0);
    const job = await harness.execute(
      'query ($id: ID!) { verificationJob(id: $id) { __typename ... on Error { message } } }',
      { id },
    );
    harness.simulator.verification.setOutcome('*', null);
    expect(JSON.stringify(job.body)).not.toContain(API_KEY);
    expect(JSON.stringify(job.body)).toContain('[redacted]');
  });
});

describe('an upstream Retry-After too large for a client to use', () => {
  it('is passed on as a day at most, never an Int overflow', async () => {
    harness.simulator.setFault(
      'verify',
      `/v2/verify/etherscan/${contract?.chainId}/${contract?.address}`,
      { kind: 'status', status: 429, headers: { 'retry-after': '99999999999' } },
    );
    const { body } = await harness.execute<{
      verifyContract: { __typename: string; retryAfterSeconds: number };
    }>(
      `mutation ($input: VerifyContractInput!) {
        verifyContract(input: $input) { __typename ... on RateLimitedError { retryAfterSeconds } }
      }`,
      { input: { address: contract?.address, chainId: contract?.chainId } },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.verifyContract).toEqual({
      __typename: 'RateLimitedError',
      retryAfterSeconds: 86_400,
    });
  });
});
