import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { EtherscanFailure } from '../../../simulator/src/server.js';
import { fixtureContract } from '../../../simulator/src/verification/fixture.js';
import { PROBE_PATH } from '../../../src/upstreams/verification/api-detection.js';
import type { VerifyApi } from '../../../src/upstreams/verification/model.js';
import type { Harness } from '../../helpers/harness.js';
import { sharedHarnesses } from '../../helpers/shared-harness.js';

/*
 * Etherscan failing behind the verification service, as real Sourcify servers report it: 502
 * with its own JSON error (session API `{ error, message }`, APIv2 `etherscan_request_failed`)
 * when Etherscan is unreachable, answers 5xx or rejects the API key; 429 for Etherscan's rate
 * limit (APIv2 `etherscan_limit`), without Retry-After. And what else VERIFY_API set to one API
 * does, on the same gateways: it is used without asking the server, and a session API the server
 * no longer has is told to the operator (`VERIFY_API=auto`: api-detection.test.ts).
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

/*
 * A gateway for each VERIFY_API set (not `auto`), against a server with both APIs (today's APIv2
 * beside 3.9.1's session API). A threshold of 2: were Etherscan's failures counted, the circuit
 * would open after two.
 */
const shared = sharedHarnesses();
const forced = (api: VerifyApi) =>
  ({
    logLevel: 'trace',
    env: {
      VERIFY_API: api,
      VERIFY_POLL_INTERVAL_MS: 10,
      CIRCUIT_FAILURE_THRESHOLD: 2,
      CIRCUIT_COOLDOWN_MS: 60_000,
    },
    simulator: { sourcify: null },
  }) as const;
afterAll(() => shared.close());

describe('VERIFY_API set', () => {
  it.each(['session', 'v2'] as const)('%s is used as it is, without asking', async (api) => {
    const harness = await shared.use(forced(api));
    const { body } = await harness.execute<{ verifyContract: Outcome }>(VERIFY, {
      input: { address: DAI.address, chainId: DAI.chainId },
    });
    expect(body.data?.verifyContract.__typename).toBe('VerificationResult');
    expect(harness.simulator.requestCount(`/verify${PROBE_PATH}`)).toBe(0);
    expect(harness.simulator.verification.received[0]?.api).toBe(api === 'v2' ? 'v2' : undefined);
  });
});

describe.each(MODES)('Etherscan failing, VERIFY_API=$api', ({ api, path, errorId }) => {
  let harness: Harness;
  beforeEach(async () => {
    harness = await shared.use(forced(api));
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

describe('VERIFY_API=session against a server without the session API (sourcify-server ≥ 3.10)', () => {
  const WETH = fixtureContract('WETH9');
  const SESSION_VERIFY = /* GraphQL */ `
    mutation ($input: VerifyContractInput!) {
      verifyContract(input: $input) { __typename ... on Error { message } }
    }
  `;

  it('tells the operator to set VERIFY_API=v2, logging it once, while lookups keep working', async () => {
    const harness = await shared.use(forced('session'));
    const logged = harness.logs.length;
    harness.simulator.verification.setServerVersion('3.12.1');
    // Three, past the threshold of 2: were they counted, the lookups after would be refused.
    for (let i = 0; i < 3; i += 1) {
      const { body } = await harness.execute<{
        verifyContract: { __typename: string; message: string };
      }>(SESSION_VERIFY, { input: { address: DAI.address, chainId: DAI.chainId } });
      expect(body.data?.verifyContract).toEqual({
        __typename: 'UpstreamUnavailableError',
        message:
          'The verification service POST /session/verify/etherscan is unavailable: it has no session API (Sourcify removed it in sourcify-server 3.10); the gateway must be configured with VERIFY_API=v2',
      });
    }
    const told = harness.logs.slice(logged).filter((line) => line.level === 50);
    expect(told).toHaveLength(1);
    expect(told[0]?.msg).toContain('VERIFY_API=v2');
    // Not a failure of the service: it answers its chain list and lookups.
    const { body } = await harness.execute<{
      supportedChains: { id: string }[];
      contract: { verified: boolean };
    }>(
      `{ supportedChains { id } contract(chainId: "1", address: "${WETH.address}") { verified } }`,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.contract.verified).toBe(true);
    expect(body.data?.supportedChains.length).toBeGreaterThan(0);
  });

  it('verifies as before against sourcify-server 3.9.1', async () => {
    const harness = await shared.use(forced('session'));
    const logged = harness.logs.length;
    harness.simulator.verification.setServerVersion('3.9.1');
    const { body } = await harness.execute<{ verifyContract: { __typename: string } }>(
      SESSION_VERIFY,
      { input: { address: DAI.address, chainId: DAI.chainId } },
    );
    expect(body.data?.verifyContract.__typename).toBe('VerificationResult');
    expect(harness.logs.slice(logged).some((line) => line.level === 50)).toBe(false);
  });
});
