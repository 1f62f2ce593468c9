import { afterEach, describe, expect, it } from 'vitest';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { type Harness, startHarness } from '../helpers/harness.js';

const VERIFY = `mutation ($input: VerifyContractInput!) {
  verifyContract(input: $input) {
    __typename
    ... on RateLimitedError { message retryAfterSeconds }
  }
}`;
const [contract] = VERIFIABLE_CONTRACTS;
const input = { address: contract?.address, chainId: contract?.chainId };

type Answer = { verifyContract: { __typename: string; retryAfterSeconds?: number } };

describe('verifyContract per client', () => {
  let harness: Harness;
  afterEach(() => harness.close());

  it('answers RateLimitedError past VERIFY_RATE_LIMIT, before anything is sent upstream', async () => {
    harness = await startHarness({ env: { VERIFY_RATE_LIMIT: 3, VERIFY_RATE_WINDOW_MS: 60_000 } });
    const answers: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const { body } = await harness.execute<Answer>(VERIFY, { input });
      answers.push(body.data?.verifyContract.__typename ?? 'none');
    }
    expect(answers.slice(3)).toEqual(['RateLimitedError', 'RateLimitedError']);
    expect(answers.slice(0, 3)).not.toContain('RateLimitedError');
    const { body } = await harness.execute<Answer>(VERIFY, { input });
    expect(body.data?.verifyContract.retryAfterSeconds).toBeGreaterThan(0);
    expect(body.data?.verifyContract.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(harness.simulator.verification.received).toHaveLength(3);
  });

  it('counts each client apart behind a trusted proxy, and ignores the header without one', async () => {
    harness = await startHarness({ env: { VERIFY_RATE_LIMIT: 1, TRUSTED_PROXIES: 1 } });
    const from = (address: string) =>
      harness.execute<Answer>(VERIFY, { input }, { headers: { 'x-forwarded-for': address } });
    expect((await from('203.0.113.1')).body.data?.verifyContract.__typename).not.toBe(
      'RateLimitedError',
    );
    expect((await from('203.0.113.2')).body.data?.verifyContract.__typename).not.toBe(
      'RateLimitedError',
    );
    expect((await from('203.0.113.1')).body.data?.verifyContract.__typename).toBe(
      'RateLimitedError',
    );
    await harness.close();

    // With no trusted proxy, a client cannot make itself new by writing the header.
    harness = await startHarness({ env: { VERIFY_RATE_LIMIT: 1 } });
    await from('203.0.113.1');
    expect((await from('203.0.113.9')).body.data?.verifyContract.__typename).toBe(
      'RateLimitedError',
    );
  });
});
