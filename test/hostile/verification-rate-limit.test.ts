import { afterAll, describe, expect, it } from 'vitest';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { startInProcess } from '../helpers/in-process.js';
import { sharedHarnesses } from '../helpers/shared-harness.js';

const VERIFY = `mutation ($input: VerifyContractInput!) {
  verifyContract(input: $input) {
    __typename
    ... on RateLimitedError { message retryAfterSeconds }
  }
}`;
const [contract] = VERIFIABLE_CONTRACTS;
const input = { address: contract?.address, chainId: contract?.chainId };

type Answer = { verifyContract: { __typename: string; retryAfterSeconds?: number } };

/**
 * One gateway behind a trusted proxy: each test is a client (an `X-Forwarded-For`) of its own, so
 * that each starts with the whole allowance.
 */
describe('verifyContract per client', () => {
  const harnesses = sharedHarnesses();
  afterAll(() => harnesses.close());
  const behindProxy = () =>
    harnesses.use({
      env: { VERIFY_RATE_LIMIT: 3, VERIFY_RATE_WINDOW_MS: 60_000, TRUSTED_PROXIES: 1 },
    });
  const typenameOf = (answer: { body: { data?: Answer | null } }) =>
    answer.body.data?.verifyContract.__typename;

  it('answers RateLimitedError past VERIFY_RATE_LIMIT, before anything is sent upstream', async () => {
    const harness = await behindProxy();
    const client = { headers: { 'x-forwarded-for': '198.51.100.7' } };
    const answers: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      answers.push(typenameOf(await harness.execute<Answer>(VERIFY, { input }, client)) ?? 'none');
    }
    expect(answers.slice(3)).toEqual(['RateLimitedError', 'RateLimitedError']);
    expect(answers.slice(0, 3)).not.toContain('RateLimitedError');
    const { body } = await harness.execute<Answer>(VERIFY, { input }, client);
    expect(body.data?.verifyContract.retryAfterSeconds).toBeGreaterThan(0);
    expect(body.data?.verifyContract.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(harness.simulator.verification.received).toHaveLength(3);
  });

  it('counts each client apart behind a trusted proxy', async () => {
    const harness = await behindProxy();
    const from = (address: string) =>
      harness.execute<Answer>(VERIFY, { input }, { headers: { 'x-forwarded-for': address } });
    for (let i = 0; i < 3; i += 1) {
      expect(typenameOf(await from('203.0.113.1'))).not.toBe('RateLimitedError');
    }
    expect(typenameOf(await from('203.0.113.2'))).not.toBe('RateLimitedError');
    expect(typenameOf(await from('203.0.113.1'))).toBe('RateLimitedError');
  });

  it('ignores the header without a trusted proxy', async () => {
    // A refusal made before anything is sent upstream: the listener alone, in process (where
    // the first request's upstream is nowhere, which the refusal of the second does not ask).
    const gateway = startInProcess({ env: { VERIFY_RATE_LIMIT: 1 }, logLevel: 'silent' });
    try {
      const from = async (address: string) => {
        const { text } = await gateway.request('/graphql', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            'x-forwarded-for': address,
          },
          body: JSON.stringify({ query: VERIFY, variables: { input } }),
        });
        return { body: JSON.parse(text) as { data?: Answer | null } };
      };
      expect(typenameOf(await from('203.0.113.1'))).not.toBe('RateLimitedError');
      // A client cannot make itself new by writing the header.
      expect(typenameOf(await from('203.0.113.9'))).toBe('RateLimitedError');
    } finally {
      await gateway.close();
    }
  });
});
