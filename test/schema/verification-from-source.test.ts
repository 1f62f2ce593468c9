import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureContract } from '../../simulator/src/verification/fixture.js';
import { eventually } from '../helpers/eventually.js';
import type { Harness } from '../helpers/harness.js';
import { sharedHarnesses } from '../helpers/shared-harness.js';
import { metadataInput, sourceInput, stdJsonInput } from '../helpers/verification-inputs.js';

/*
 * verifyContractFromSource and verifyContractFromMetadata against today's Sourcify (the
 * simulator's default server), with no VERIFY_API set.
 */

const GREETER = fixtureContract('Greeter');
const WETH = fixtureContract('WETH9');
const DAI = fixtureContract('Dai');

const RESULT = /* GraphQL */ `
  __typename
  ... on Error { message }
  ... on InvalidInputError { field maxBytes }
  ... on RateLimitedError { retryAfterSeconds }
  ... on VerificationRejectedError {
    status code reason errorId
    job { id completed error { code reason message errorData } }
  }
  ... on VerificationPending { verificationId stale }
  ... on VerificationResult {
    alreadyVerified
    contracts { name compiledPath compilerVersion status address }
    job {
      id completed startedAt finishedAt compilationTimeMs
      externalVerifications {
        etherscan { verificationId statusUrl explorerUrl error }
        blockscout { verificationId error }
        routescan { verificationId error }
      }
      contract { match matchId }
      error { code reason }
    }
  }
`;
const FROM_SOURCE = `mutation ($input: VerifyFromSourceInput!) { verifyContractFromSource(input: $input) { ${RESULT} } }`;
const FROM_METADATA = `mutation ($input: VerifyFromMetadataInput!) { verifyContractFromMetadata(input: $input) { ${RESULT} } }`;

type Outcome = Record<string, unknown> & {
  __typename: string;
  message?: string;
  job?: Record<string, unknown> & { error?: Record<string, unknown> | null };
};

/** Bytes of sources one verification may send (VERIFY_MAX_SOURCE_BYTES): megabytes. */
const MAX_SOURCE_BYTES = 4_000_000;

/** Verifications one client may start a minute (VERIFY_RATE_LIMIT): the allowance's test spends them. */
const RATE_LIMIT = 2;

/*
 * One gateway for the file, reset through the simulator before each test: the verifications and
 * their request bodies (MAX_BODY_BYTES 10,000, VERIFY_MAX_SOURCE_BYTES 4,000,000 for megabytes of
 * sources, one upload at a time) and the per-client allowance (VERIFY_RATE_LIMIT 2). Behind one
 * trusted proxy, every request names a client of its own (`ownClient`): no verification counts
 * against another's allowance but in the allowance's test, whose requests share one.
 */
const shared = sharedHarnesses();
afterAll(() => shared.close());
const verifications = () =>
  shared.use({
    env: {
      MAX_BODY_BYTES: 10_000,
      VERIFY_MAX_SOURCE_BYTES: MAX_SOURCE_BYTES,
      VERIFY_MAX_CONCURRENT_UPLOADS: 1,
      VERIFY_WAIT_MS: 3_000,
      VERIFY_POLL_INTERVAL_MS: 20,
      VERIFY_RATE_LIMIT: RATE_LIMIT,
      TRUSTED_PROXIES: 1,
    },
  });

let clients = 0;
/**
 * The `x-forwarded-for` of a client of its own: a new one for each request, or per `test` one its
 * requests share (named by the test).
 */
function ownClient(per: 'request' | 'test' = 'request'): { 'x-forwarded-for': string } {
  clients += 1;
  const name = per === 'test' ? (expect.getState().currentTestName ?? '') : `request ${clients}`;
  return { 'x-forwarded-for': name.replaceAll(',', ';') };
}

describe('verifyContractFromSource and verifyContractFromMetadata', () => {
  let harness: Harness;
  beforeEach(async () => {
    harness = await verifications();
  });

  const fromSource = async (input: Record<string, unknown>) => {
    const { body } = await harness.execute<{ verifyContractFromSource: Outcome }>(
      FROM_SOURCE,
      { input },
      { headers: ownClient() },
    );
    expect(body.errors).toBeUndefined();
    return body.data?.verifyContractFromSource as Outcome;
  };
  const posts = () =>
    harness.simulator.requests.filter((request) => request.method === 'POST').length;

  it('verifies from standard JSON, with every field of the job: times, compilation time, the explorers it was also submitted to', async () => {
    const result = await fromSource(sourceInput());
    expect(result).toMatchObject({
      __typename: 'VerificationResult',
      alreadyVerified: false,
      contracts: [
        {
          name: GREETER.name,
          compiledPath: GREETER.compiledPath,
          compilerVersion: GREETER.compilerVersion,
          status: 'PERFECT',
          address: GREETER.address,
        },
      ],
      job: {
        completed: true,
        startedAt: expect.any(String),
        finishedAt: expect.any(String),
        compilationTimeMs: expect.any(Number),
        externalVerifications: {
          etherscan: {
            verificationId: expect.any(String),
            statusUrl: expect.stringContaining('checkverifystatus'),
            explorerUrl: expect.stringContaining(GREETER.address),
            error: null,
          },
          blockscout: { verificationId: expect.any(String), error: null },
          routescan: { verificationId: null, error: 'NOTOK: Max rate limit reached' },
        },
        contract: { match: 'PERFECT', matchId: expect.stringMatching(/^\d+$/) },
        error: null,
      },
    });
    const [received] = harness.simulator.verification.received;
    expect(received).toMatchObject({ api: 'v2', explorer: 'std-json', status: 202 });
  });

  it('verifies from metadata and sources', async () => {
    const { body } = await harness.execute<{ verifyContractFromMetadata: Outcome }>(
      FROM_METADATA,
      { input: metadataInput() },
      { headers: ownClient() },
    );
    expect(body.data?.verifyContractFromMetadata).toMatchObject({
      __typename: 'VerificationResult',
      contracts: [{ status: 'PERFECT' }],
      job: { completed: true },
    });
    expect(harness.simulator.verification.received[0]).toMatchObject({ explorer: 'metadata' });
  });

  it('answers a failed job as VerificationRejectedError with its typed reason and the whole job', async () => {
    const result = await fromSource(
      sourceInput(GREETER, { contractIdentifier: `${GREETER.compiledPath}:Other` }),
    );
    expect(result).toMatchObject({
      __typename: 'VerificationRejectedError',
      status: 422,
      code: 'no_match',
      reason: 'NO_MATCH',
      errorId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      job: { completed: true, error: { code: 'no_match', reason: 'NO_MATCH' } },
    });
  });

  it("keeps a compiler error's data whole", async () => {
    const manager = fixtureContract('TokenManager');
    const result = await fromSource(sourceInput(manager));
    expect(result).toMatchObject({
      __typename: 'VerificationRejectedError',
      reason: 'COMPILER_ERROR',
    });
    expect(result.job?.error?.errorData).toMatchObject({
      compilerErrors: [{ type: 'ParserError', severity: 'error' }],
    });
    expect(String(result.job?.error?.message)).toContain('"errorCode":"6275"');
  });

  it.each([
    ['compiler_timeout', 'COMPILER_TIMEOUT'],
    ['compiler_out_of_memory', 'COMPILER_OUT_OF_MEMORY'],
    ['job_abandoned', 'JOB_ABANDONED'],
    ['missing_source', 'MISSING_SOURCE'],
  ] as const)('types the job error %s as %s', async (code, reason) => {
    harness.simulator.verification.setOutcome('*', { jobError: code });
    expect(await fromSource(sourceInput())).toMatchObject({
      __typename: 'VerificationRejectedError',
      code,
      reason,
      job: { error: { code, reason } },
    });
  });

  it('answers a contract already verified, on submission (409) and from a completed job, with the existing match', async () => {
    const refused = await fromSource(sourceInput(WETH));
    expect(refused).toMatchObject({
      __typename: 'VerificationResult',
      alreadyVerified: true,
      contracts: [{ address: WETH.address, status: 'PERFECT', name: WETH.name }],
      job: null,
    });
    harness.simulator.verification.setOutcome('*', { jobError: 'already_verified' });
    const completed = await fromSource(sourceInput(DAI));
    expect(completed).toMatchObject({
      __typename: 'VerificationResult',
      alreadyVerified: true,
      job: { completed: true, error: { code: 'already_verified', reason: 'ALREADY_VERIFIED' } },
    });
  });

  it('answers duplicate_verification_request as RateLimitedError telling what to do', async () => {
    harness.simulator.verification.setOutcome('*', { reject: 'duplicate_verification_request' });
    const result = await fromSource(sourceInput());
    expect(result.__typename).toBe('RateLimitedError');
    expect(result.message).toContain('cannot cancel a job');
  });

  it('refuses a standard JSON input over VERIFY_MAX_SOURCE_BYTES before sending anything', async () => {
    // Within the body an upload may send (MAX_BODY_BYTES more): the resolver refuses it.
    const big = stdJsonInput(GREETER, 'x'.repeat(MAX_SOURCE_BYTES));
    const result = await fromSource({ ...sourceInput(), stdJsonInput: big });
    expect(result).toMatchObject({
      __typename: 'InvalidInputError',
      field: 'stdJsonInput',
      maxBytes: MAX_SOURCE_BYTES,
    });
    expect(result.message).toContain('VERIFY_MAX_SOURCE_BYTES');
    expect(harness.simulator.requestCount()).toBe(0);
  });

  it.each([
    ['stdJsonInput', { stdJsonInput: 'pragma solidity' }],
    ['stdJsonInput', { stdJsonInput: { language: 'Solidity', sources: {} } }],
    ['stdJsonInput', { stdJsonInput: { ...stdJsonInput(), outputSelection: {} } }],
    ['compilerVersion', { compilerVersion: 'latest' }],
    ['contractIdentifier', { contractIdentifier: 'Greeter' }],
    ['contractIdentifier', { contractIdentifier: 'contracts/Other.sol:Greeter' }],
    ['creationTransactionHash', { creationTransactionHash: '0x1234' }],
    ['address', { address: '0x1234' }],
  ])('refuses a bad %s before sending anything', async (field, extra) => {
    const result = await fromSource(sourceInput(GREETER, extra));
    expect(result).toMatchObject({ __typename: 'InvalidInputError', field });
    expect(posts()).toBe(0);
  });

  it('sends a creation transaction hash lowercase, as the service wants it', async () => {
    const hash = `0x${'AB'.repeat(32)}`;
    expect(
      (await fromSource(sourceInput(GREETER, { creationTransactionHash: hash }))).__typename,
    ).toBe('VerificationResult');
  });
});

describe('request bodies of source verifications', () => {
  let harness: Harness;
  beforeEach(async () => {
    harness = await verifications();
  });

  const post = (body: unknown) =>
    harness.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...ownClient() },
      body: JSON.stringify(body),
    });
  /** A standard JSON input of about `bytes`, as a Foundry build of many files is. */
  const input = (bytes: number) => ({
    ...sourceInput(),
    stdJsonInput: stdJsonInput(GREETER, `// ${'x'.repeat(bytes)}`),
  });

  it('reach the resolver past MAX_BODY_BYTES, megabytes of them, for the source mutations only', async () => {
    const response = await post({ query: FROM_SOURCE, variables: { input: input(3_000_000) } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      data: { verifyContractFromSource: { __typename: string } };
    };
    expect(body.data.verifyContractFromSource.__typename).toBe('VerificationResult');
    expect(harness.simulator.verification.received[0]?.bytes).toBeGreaterThan(3_000_000);

    const other = await post({
      query: `mutation ($input: VerifyContractInput!) { verifyContract(input: $input) { __typename } }`,
      variables: {
        input: { address: GREETER.address, chainId: GREETER.chainId },
        padding: 'x'.repeat(20_000),
      },
    });
    expect(other.status).toBe(413);
    const refused = (await other.json()) as {
      errors: { message: string; extensions: { code: string } }[];
    };
    expect(refused.errors[0]?.extensions.code).toBe('PAYLOAD_TOO_LARGE');
    // It names the mutations that may be larger, as the schema marks them.
    expect(refused.errors[0]?.message).toContain(
      'Only verifyContractFromMetadata or verifyContractFromSource (sent as a query with variables) may be larger.',
    );
  });

  it('are refused past VERIFY_MAX_SOURCE_BYTES plus MAX_BODY_BYTES before they are read', async () => {
    const response = await post({
      query: FROM_SOURCE,
      variables: { input: input(MAX_SOURCE_BYTES + 100_000) },
    });
    expect(response.status).toBe(413);
    expect(harness.simulator.requestCount()).toBe(0);
  });

  it('are read VERIFY_MAX_CONCURRENT_UPLOADS at a time; more get 503 TOO_MANY_UPLOADS', async () => {
    // The first one waits for the service, holding the only upload slot.
    harness.simulator.setFault('verify', '*', { kind: 'delay', ms: 600 });
    const first = post({ query: FROM_SOURCE, variables: { input: input(50_000) } });
    await eventually(() => harness.simulator.requestCount() > 0);
    const second = await post({ query: FROM_SOURCE, variables: { input: input(50_000) } });
    expect(second.status).toBe(503);
    expect(
      ((await second.json()) as { errors: { extensions: { code: string } }[] }).errors[0]
        ?.extensions.code,
    ).toBe('TOO_MANY_UPLOADS');
    expect((await first).status).toBe(200);
    harness.simulator.clearFaults();
    // The slot is free again once the first one was answered.
    expect((await post({ query: FROM_SOURCE, variables: { input: input(50_000) } })).status).toBe(
      200,
    );
  });
});

describe('source verifications against a server without APIv2', () => {
  it('answer UpstreamUnavailableError saying so', async () => {
    // Source verification always speaks APIv2: which API the gateway found the server to speak
    // does not matter, and the next test's reset brings APIv2 back.
    const harness = await verifications();
    harness.simulator.verification.setServerVersion('session-only');
    const { body } = await harness.execute<{ verifyContractFromSource: Outcome }>(
      FROM_SOURCE,
      { input: sourceInput() },
      { headers: ownClient() },
    );
    expect(body.data?.verifyContractFromSource.__typename).toBe('UpstreamUnavailableError');
    expect(body.data?.verifyContractFromSource.message).toContain('the server has no APIv2');
  });
});

describe('the per-client allowance', () => {
  it('counts the three ways to verify together', async () => {
    const harness = await verifications();
    const headers = ownClient('test');
    const answers = [
      (
        await harness.execute<{ verifyContractFromSource: Outcome }>(
          FROM_SOURCE,
          { input: sourceInput() },
          { headers },
        )
      ).body.data?.verifyContractFromSource.__typename,
      (
        await harness.execute<{ verifyContract: Outcome }>(
          `mutation ($input: VerifyContractInput!) { verifyContract(input: $input) { __typename } }`,
          { input: { address: WETH.address, chainId: WETH.chainId } },
          { headers },
        )
      ).body.data?.verifyContract.__typename,
      (
        await harness.execute<{ verifyContractFromMetadata: Outcome }>(
          FROM_METADATA,
          { input: metadataInput(DAI) },
          { headers },
        )
      ).body.data?.verifyContractFromMetadata.__typename,
    ];
    expect(answers).toHaveLength(RATE_LIMIT + 1);
    expect(answers[RATE_LIMIT]).toBe('RateLimitedError');
    expect(answers.slice(0, RATE_LIMIT)).not.toContain('RateLimitedError');
  });
});
