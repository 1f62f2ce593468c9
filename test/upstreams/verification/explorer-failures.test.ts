import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EtherscanFailure } from '../../../simulator/src/server.js';
import { fixtureContract } from '../../../simulator/src/verification/fixture.js';
import { type Harness, startHarness } from '../../helpers/harness.js';

/*
 * Etherscan failing behind the verification service, as real Sourcify servers report it: 502
 * with its own JSON error (session API `{ error, message }`, APIv2 `etherscan_request_failed`)
 * when Etherscan is unreachable, answers 5xx or rejects the API key; 429 for Etherscan's rate
 * limit (APIv2 `etherscan_limit`), without Retry-After.
 */

const DAI = fixtureContract('Dai');
const API_KEY = 'WRONG-KEY-0123456789abcdef';

const VERIFY = /* GraphQL */ `
  mutation ($input: VerifyContractInput!) {
    verifyContract(input: $input) {
      __typename
      ... on Error { message }
      ... on InvalidInputError { field errorId }
      ... on RateLimitedError { retryAfterSeconds errorId }
      ... on UpstreamUnavailableError { errorId }
      ... on VerificationResult { contracts { address status } }
      ... on VerificationPending { verificationId }
    }
  }
`;

interface Outcome {
  __typename: string;
  message?: string;
  field?: string;
  errorId?: string | null;
  retryAfterSeconds?: number | null;
}

const MODES = [
  { api: 'session', path: '/verify/session/verify/etherscan', errorId: null },
  {
    api: 'v2',
    path: `/verify/v2/verify/etherscan/${DAI.chainId}/${DAI.address}`,
    errorId: expect.stringMatching(/^[0-9a-f-]{36}$/),
  },
] as const;

describe.each(MODES)('Etherscan failing, VERIFY_API=$api', ({ api, path, errorId }) => {
  let harness: Harness;
  beforeAll(async () => {
    // A threshold of 2: were these answers counted, the circuit would open after two.
    harness = await startHarness({
      logLevel: 'trace',
      env: {
        VERIFY_API: api,
        VERIFY_POLL_INTERVAL_MS: 10,
        CIRCUIT_FAILURE_THRESHOLD: 2,
        CIRCUIT_COOLDOWN_MS: 60_000,
      },
      // Today's APIv2 beside 3.9.1's session API, for both modes.
      simulator: { sourcify: null },
    });
  });
  afterAll(() => harness.close());
  beforeEach(() => {
    harness.simulator.verification.reset();
    harness.simulator.resetRequests();
  });

  const verify = async (input: Record<string, unknown> = {}) => {
    const { body } = await harness.execute<{ verifyContract: Outcome }>(VERIFY, {
      input: { address: DAI.address, chainId: DAI.chainId, ...input },
    });
    expect(body.errors).toBeUndefined();
    return body.data?.verifyContract;
  };

  it('answers a rejected apiKey as InvalidInputError on apiKey, without echoing the key', async () => {
    harness.simulator.verification.setEtherscanFailure('invalid-api-key');
    const result = await verify({ apiKey: API_KEY });
    expect(result).toMatchObject({ __typename: 'InvalidInputError', field: 'apiKey', errorId });
    expect(result?.message).toMatch(/^The block explorer rejected your apiKey: check it/);
    expect(result?.message).toContain(
      'Error in Etherscan API response. Result message: Invalid API Key',
    );
    expect(JSON.stringify(result)).not.toContain(API_KEY);
    expect(harness.simulator.verification.received.at(-1)?.apiKey).toBe(API_KEY);
    for (const line of harness.rawLogs) expect(line).not.toContain(API_KEY);
  });

  it("tells a caller without an apiKey that the service's own key was rejected", async () => {
    harness.simulator.verification.setEtherscanFailure('invalid-api-key');
    const result = await verify();
    expect(result).toMatchObject({ __typename: 'InvalidInputError', field: 'apiKey' });
    expect(result?.message).toMatch(
      /^The block explorer rejected the verification service's own API key: send your own/,
    );
  });

  it.each([
    ['unreachable', 'Network error while connecting to Etherscan API.'],
    ['http-error', 'Etherscan API returned HTTP 503 error.'],
  ] as const)(
    "answers Etherscan %s as UpstreamUnavailableError with Sourcify's message",
    async (failure, said) => {
      harness.simulator.verification.setEtherscanFailure(failure);
      const result = await verify({ apiKey: API_KEY });
      expect(result).toEqual({
        __typename: 'UpstreamUnavailableError',
        message: `The verification service could not get the sources from the block explorer: ${said}`,
        errorId,
      });
    },
  );

  it("answers Etherscan's rate limit as RateLimitedError, retryAfterSeconds null", async () => {
    harness.simulator.verification.setEtherscanFailure('rate-limit');
    expect(await verify()).toMatchObject({
      __typename: 'RateLimitedError',
      message: 'Etherscan API rate limit reached, try later.',
      retryAfterSeconds: null,
      errorId,
    });
  });

  it.each<EtherscanFailure>(['invalid-api-key', 'unreachable', 'http-error', 'rate-limit'])(
    'never opens the circuit for everyone: five %s answers in a row, then everything works',
    async (failure) => {
      harness.simulator.verification.setEtherscanFailure(failure, { times: 5 });
      for (let i = 0; i < 5; i += 1) {
        expect((await verify({ apiKey: API_KEY }))?.__typename).not.toBe('VerificationResult');
      }
      // Each attempt reached the service; nobody is refused now.
      expect(harness.simulator.requestCount(path)).toBe(5);
      expect((await verify())?.__typename).toMatch(/^Verification(Result|Pending)$/);
      const lookup = await harness.execute<{ contract: { verified: boolean } | null }>(
        `{ contract(chainId: "1", address: "${fixtureContract('WETH9').address}") { verified } }`,
      );
      expect(lookup.body.errors).toBeUndefined();
      expect(lookup.body.data?.contract?.verified).toBe(true);
      expect(harness.logs.some((line) => line.msg === 'upstream circuit open')).toBe(false);
    },
  );
});
