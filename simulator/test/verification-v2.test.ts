import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  DEFAULT_JOB_DELAY_MS,
  type Simulator,
  type SourcifyV2Contract,
  type SourcifyV2ErrorBody,
  type SourcifyV2Job,
  startSimulator,
} from '../src/server.js';
import type { UpstreamRequest } from '../src/upstream.js';
import { fixtureContract, type VerifiableContract } from '../src/verification/fixture.js';
import { createVerificationUpstream } from '../src/verification/routes.js';
import type { SourcifySessionResponse } from '../src/verification/types.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** How Sourcify's database formats job and match times: whole seconds. */
const SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const UNKNOWN_ADDRESS = '0x0000000000000000000000000000000000000001';

const fixture = fixtureContract;

const WETH = fixture('WETH9');
const DAI = fixture('Dai');
const USDC = fixture('FiatTokenProxy');
const GREETER = fixture('Greeter');
const TOKEN_MANAGER = fixture('TokenManager');
const COUNTER = fixture('Counter');

type Target = Pick<VerifiableContract, 'chainId' | 'address'>;

/** A request as the simulator's server hands it to an upstream, for one made in the test. */
const request = (method: string, path: string): UpstreamRequest => ({
  method,
  path,
  query: new URLSearchParams(),
  headers: method === 'POST' ? { 'content-type': 'application/json' } : {},
  readBody: async () => Buffer.from('{}'),
});

let sim: Simulator;

beforeAll(async () => {
  // Both APIs: 3.9.1's session API beside today's APIv2.
  sim = await startSimulator({ sourcify: null });
});

afterAll(async () => {
  await sim.close();
});

afterEach(() => {
  sim.clearFaults();
  sim.verification.reset();
});

interface Answer<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

async function call<T = unknown>(
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const hasBody = options.body !== undefined;
  const response = await fetch(`${sim.verifyBaseUrl}${path}`, {
    method,
    headers: {
      ...(hasBody ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body: hasBody
      ? typeof options.body === 'string'
        ? options.body
        : JSON.stringify(options.body)
      : null,
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : undefined,
    headers: response.headers,
  };
}

const verify = <T = { verificationId: string }>(target: Target, body: unknown = {}) =>
  call<T>('POST', `/v2/verify/etherscan/${target.chainId}/${target.address}`, { body });
const getJob = (verificationId: string) =>
  call<SourcifyV2Job>('GET', `/v2/verify/${verificationId}`);
const getContract = (target: Target, query = '') =>
  call<SourcifyV2Contract>('GET', `/v2/contract/${target.chainId}/${target.address}${query}`);

/** Polls the job, as a client does, until it completes. */
async function poll(verificationId: string, timeoutMs = 3_000): Promise<SourcifyV2Job> {
  return vi.waitFor(
    async () => {
      const answer = await getJob(verificationId);
      expect(answer.status).toBe(200);
      expect(answer.body.isJobCompleted).toBe(true);
      return answer.body;
    },
    { timeout: timeoutMs, interval: 10 },
  );
}

/** Starts a job and waits for it. */
async function verified(target: Target): Promise<SourcifyV2Job> {
  const answer = await verify(target);
  expect(answer.status).toBe(202);
  return poll(answer.body.verificationId);
}

function expectError(
  answer: Answer,
  status: number,
  customCode: string,
  message?: string | RegExp,
) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(answer.body).toEqual({
    customCode,
    message:
      message === undefined
        ? expect.any(String)
        : message instanceof RegExp
          ? expect.stringMatching(message)
          : message,
    errorId: expect.stringMatching(UUID),
  });
}

describe('POST /v2/verify/etherscan/:chainId/:address: the job lifecycle', () => {
  it('answers 202 { verificationId }, then a pending job, then the completed job with its match', async () => {
    expect(sim.verification.jobDelayMs).toBe(DEFAULT_JOB_DELAY_MS);
    const started = Date.now();
    const accepted = await verify(DAI, { apiKey: 'MY-KEY' });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ verificationId: expect.stringMatching(UUID) });
    const { verificationId } = accepted.body;

    const pending = await getJob(verificationId);
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual({
      isJobCompleted: false,
      verificationId,
      jobStartTime: expect.stringMatching(SECONDS),
      contract: {
        match: null,
        creationMatch: null,
        runtimeMatch: null,
        chainId: '1',
        address: DAI.address,
      },
    });
    // Not verified until the job completes.
    expect((await getContract(DAI)).status).toBe(404);
    expect(sim.verification.jobs()).toEqual([
      {
        verificationId,
        chainId: '1',
        address: DAI.address,
        state: 'pending',
        match: null,
        errorCode: null,
        startedAt: expect.any(String),
        finishedAt: null,
      },
    ]);

    const job = await poll(verificationId);
    expect(Date.now() - started).toBeGreaterThanOrEqual(DEFAULT_JOB_DELAY_MS - 10);
    expect(job).toEqual({
      isJobCompleted: true,
      verificationId,
      jobStartTime: pending.body.jobStartTime,
      jobFinishTime: expect.stringMatching(SECONDS),
      compilationTime: expect.stringMatching(/^\d+$/),
      contract: {
        match: 'exact_match',
        creationMatch: 'exact_match',
        runtimeMatch: 'exact_match',
        chainId: '1',
        address: DAI.address,
        verifiedAt: expect.stringMatching(SECONDS),
        matchId: expect.stringMatching(/^\d+$/),
      },
    });
    expect(Date.parse(job.jobFinishTime ?? '')).toBeGreaterThanOrEqual(
      Date.parse(job.jobStartTime),
    );

    const [info] = sim.verification.jobs();
    expect(info).toMatchObject({ state: 'succeeded', match: 'exact_match', errorCode: null });
    expect(Date.parse(info?.finishedAt ?? '') - Date.parse(info?.startedAt ?? '')).toBe(
      DEFAULT_JOB_DELAY_MS,
    );

    const lookup = await getContract(DAI);
    expect(lookup.status).toBe(200);
    expect(lookup.body).toEqual({
      matchId: job.contract.matchId,
      creationMatch: 'exact_match',
      runtimeMatch: 'exact_match',
      verifiedAt: job.contract.verifiedAt,
      match: 'exact_match',
      chainId: '1',
      address: DAI.address,
    });
  });

  it('maps a partial match to `match`, and accepts any case of address', async () => {
    const accepted = await verify({ chainId: '1', address: USDC.address.toLowerCase() });
    expect(accepted.status).toBe(202);
    const job = await poll(accepted.body.verificationId);
    expect(job.contract).toMatchObject({
      match: 'match',
      creationMatch: 'match',
      runtimeMatch: 'match',
      address: USDC.address,
    });
    expect((await getContract(USDC)).body).toMatchObject({ match: 'match', address: USDC.address });
  });

  it('shares the match storage with the session API, both ways', async () => {
    await verified(GREETER);
    const session = await call<SourcifySessionResponse>('POST', '/session/verify/etherscan', {
      body: { address: GREETER.address, chainId: GREETER.chainId },
    });
    expect(session.body.contracts[0]).toMatchObject({
      status: 'perfect',
      storageTimestamp: expect.any(String),
    });

    // Verified through a session, found by the v2 lookup.
    await call('POST', '/session/verify/etherscan', {
      body: { address: USDC.address, chainId: USDC.chainId },
    });
    expect((await getContract(USDC)).body).toMatchObject({
      match: 'match',
      verifiedAt: expect.stringMatching(SECONDS),
    });
  });

  it('accepts an empty JSON body and a trailing slash; refuses a body without a content type', async () => {
    const response = await fetch(`${sim.verifyBaseUrl}/v2/verify/etherscan/1/${DAI.address}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ verificationId: expect.stringMatching(UUID) });

    // The validator finds no schema for a body of no media type.
    const bare = await call('POST', `/v2/verify/etherscan/1/${USDC.address}`);
    expectError(bare, 400, 'invalid_parameter', 'unsupported media type undefined');
    expect(sim.verification.received.at(-1)).toMatchObject({ status: 400, verificationId: null });
  });
});

describe('job delays', () => {
  it('0: the job is completed at the first poll', async () => {
    sim.verification.setJobDelay(0);
    const accepted = await verify(DAI);
    const job = await getJob(accepted.body.verificationId);
    expect(job.body.isJobCompleted).toBe(true);
    expect(job.body.contract.match).toBe('exact_match');
  });

  it('null: the job stays pending until the delay changes, then completes (not in the past)', async () => {
    // On a clock the test moves (Date alone), an hour past the default delay, the job still waits.
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);
    const upstream = createVerificationUpstream({ serverVersion: null });
    upstream.setJobDelay(null);
    expect(upstream.jobDelayMs).toBeNull();
    const accepted = await upstream.handle(
      request('POST', `/v2/verify/etherscan/${DAI.chainId}/${DAI.address}`),
    );
    const { verificationId } = JSON.parse(accepted.body.toString()) as { verificationId: string };
    const job = async () =>
      JSON.parse(
        (await upstream.handle(request('GET', `/v2/verify/${verificationId}`))).body.toString(),
      ) as SourcifyV2Job;
    advance(60 * 60_000);
    for (let i = 0; i < 3; i += 1) expect((await job()).isJobCompleted).toBe(false);
    expect(upstream.jobs().map(({ state }) => state)).toEqual(['pending']);

    advance(1_000);
    const released = Date.now();
    upstream.setJobDelay(0);
    expect(await job()).toMatchObject({ isJobCompleted: true, contract: { match: 'exact_match' } });
    const [info] = upstream.jobs();
    expect(Date.parse(info?.finishedAt ?? '')).toBeGreaterThanOrEqual(released);
  });

  it('refuses a bad delay', () => {
    for (const bad of [
      -1,
      Number.NaN,
      600_001,
      '10' as unknown as number,
      undefined as unknown as number,
    ]) {
      expect(() => sim.verification.setJobDelay(bad), String(bad)).toThrow(TypeError);
    }
    expect(sim.verification.jobDelayMs).toBe(DEFAULT_JOB_DELAY_MS);
  });
});

describe('POST /v2/verify/etherscan: synchronous errors', () => {
  it('unsupported_chain (400): unknown chains, and chains Sourcify cannot import from Etherscan for', async () => {
    expectError(
      await verify({ chainId: '999999', address: DAI.address }),
      400,
      'unsupported_chain',
      'Chain 999999 not found',
    );
    expectError(
      await verify({ chainId: '295', address: DAI.address }),
      400,
      'unsupported_chain',
      'Requested chain 295 is not supported for importing from Etherscan.',
    );
  });

  it('unsupported_chain is 404 on sourcify-server 3.9.1', async () => {
    sim.verification.setServerVersion('3.9.1');
    expectError(
      await verify({ chainId: '999999', address: DAI.address }),
      404,
      'unsupported_chain',
      'Chain 999999 not found',
    );
    expectError(
      await verify({ chainId: '295', address: DAI.address }),
      404,
      'unsupported_chain',
      'Requested chain 295 is not supported for importing from Etherscan.',
    );
    sim.verification.setServerVersion('3.12.1');
    expectError(
      await verify({ chainId: '999999', address: DAI.address }),
      400,
      'unsupported_chain',
    );
  });

  it.each([null, '3.9.1', '3.12.1'] as const)(
    'internal_error (500) on a deprecated chain (5), server version %s',
    async (version) => {
      sim.verification.setServerVersion(version);
      expectError(
        await verify({ chainId: '5', address: DAI.address }),
        500,
        'internal_error',
        'The server encountered an unexpected error.',
      );
      expectError(
        await getContract({ chainId: '5', address: DAI.address }),
        500,
        'internal_error',
        'The server encountered an unexpected error.',
      );
      expect(sim.verification.jobs()).toEqual([]);
    },
  );

  it('reports only the first problem the validator finds', async () => {
    expectError(
      await verify({ chainId: 'mainnet', address: '0x12' }),
      400,
      'invalid_parameter',
      'request/params/chainId must match pattern "^\\d+$"',
    );
    expectError(
      await verify({ chainId: '1', address: '0x12' }),
      400,
      'invalid_parameter',
      'request/params/address must NOT have fewer than 42 characters',
    );
    expectError(
      await getContract({ chainId: '1', address: '0x12' }, '?limit=1'),
      400,
      'invalid_parameter',
      "Unknown query parameter 'limit'",
    );
  });

  it.each([
    [
      'a short address',
      '1',
      '0x1234',
      /^request\/params\/address must NOT have fewer than 42 characters/,
    ],
    ['a non-hex address', '1', `0x${'G'.repeat(40)}`, /must match pattern/],
    ['an address without 0x', '1', DAI.address.slice(2), /request\/params\/address/],
    ['a bad checksum', '1', `0x${'aB'.repeat(20)}`, `Invalid address: 0x${'aB'.repeat(20)}`],
    ['a chain name', 'mainnet', DAI.address, 'request/params/chainId must match pattern "^\\d+$"'],
  ])('invalid_parameter (400): %s', async (_name, chainId, address, message) => {
    expectError(await verify({ chainId, address }), 400, 'invalid_parameter', message);
  });

  it('invalid_json and invalid_parameter (400) for bad bodies', async () => {
    expectError(await verify(DAI, '{"apiKey":'), 400, 'invalid_json');
    expectError(
      await verify(DAI, { apiKey: 42 }),
      400,
      'invalid_parameter',
      'request/body/apiKey must be string',
    );
    expectError(await verify(DAI, []), 400, 'invalid_parameter', 'request/body must be object');
    const text = await call('POST', `/v2/verify/etherscan/1/${DAI.address}`, {
      body: '{}',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(text, 400, 'invalid_parameter', 'unsupported media type text/plain');
  });

  it('not_etherscan_verified (404): the explorer does not know the contract (on that chain)', async () => {
    expectError(
      await verify({ chainId: '1', address: UNKNOWN_ADDRESS }),
      404,
      'not_etherscan_verified',
      'This contract is not verified on Etherscan.',
    );
    expectError(
      await verify({ chainId: '1', address: GREETER.address }),
      404,
      'not_etherscan_verified',
    );
  });

  it('already_verified (409): both bytecodes already have an exact match', async () => {
    expectError(
      await verify({ chainId: '1', address: WETH.address.toLowerCase() }),
      409,
      'already_verified',
      `Contract ${WETH.address} on chain 1 is already verified with runtimeMatch and creationMatch both being exact matches.`,
    );
    await verified(DAI);
    expectError(await verify(DAI), 409, 'already_verified');
  });

  it('duplicate_verification_request (429): a job for the contract is still pending', async () => {
    sim.verification.setJobDelay(null);
    expect((await verify(DAI)).status).toBe(202);
    expectError(
      await verify({ chainId: '1', address: DAI.address.toLowerCase() }),
      429,
      'duplicate_verification_request',
      `Contract ${DAI.address} on chain 1 is already being verified`,
    );
    // Another contract is not held up.
    expect((await verify(USDC)).status).toBe(202);
  });

  it('gives every error a new errorId', async () => {
    const first = await verify<SourcifyV2ErrorBody>({ chainId: '1', address: UNKNOWN_ADDRESS });
    const second = await verify<SourcifyV2ErrorBody>({ chainId: '1', address: UNKNOWN_ADDRESS });
    expect(first.body.errorId).not.toBe(second.body.errorId);
  });
});

describe('Etherscan failing behind APIv2', () => {
  it.each([
    [
      'unreachable',
      502,
      'etherscan_request_failed',
      'Network error while connecting to Etherscan API.',
    ],
    ['http-error', 502, 'etherscan_request_failed', 'Etherscan API returned HTTP 503 error.'],
    [
      'invalid-api-key',
      502,
      'etherscan_request_failed',
      'Error in Etherscan API response. Result message: Invalid API Key',
    ],
    ['rate-limit', 429, 'etherscan_limit', 'Etherscan API rate limit reached, try later.'],
  ] as const)(
    '%s: %i %s, without Retry-After, then served normally',
    async (failure, status, code, message) => {
      sim.verification.setEtherscanFailure(failure, { times: 1 });
      const failed = await verify(DAI, { apiKey: 'K' });
      expectError(failed, status, code, message);
      expect(failed.headers.get('retry-after')).toBeNull();
      expect(sim.verification.received.at(-1)).toMatchObject({ api: 'v2', apiKey: 'K', status });
      expect(sim.verification.jobs()).toEqual([]);
      expect((await verify(DAI)).status).toBe(202);
    },
  );

  it("comes after Sourcify's own checks", async () => {
    sim.verification.setEtherscanFailure('unreachable', { times: 1 });
    expectError(await verify(WETH), 409, 'already_verified');
    expectError(await verify({ chainId: '295', address: DAI.address }), 400, 'unsupported_chain');
    expect(sim.verification.etherscanFailure).toEqual({ failure: 'unreachable', remaining: 1 });
    expectError(
      await verify({ chainId: '1', address: UNKNOWN_ADDRESS }),
      502,
      'etherscan_request_failed',
    );
  });
});

describe('scripted outcomes', () => {
  it.each([
    ['etherscan_limit', 429, 'Etherscan API rate limit reached, try later.'],
    ['etherscan_request_failed', 502, 'Network error while connecting to Etherscan API.'],
    ['not_etherscan_verified', 404, 'This contract is not verified on Etherscan.'],
    ['already_verified', 409, /is already verified/],
    ['duplicate_verification_request', 429, /is already being verified/],
    ['unsupported_chain', 400, 'Chain 1 not found'],
    ['internal_error', 500, 'The server encountered an unexpected error.'],
  ] as const)(
    'reject %s → %i, then the next request is served normally',
    async (code, status, message) => {
      sim.verification.setOutcome(DAI, { reject: code }, { times: 1 });
      expectError(await verify(DAI), status, code, message);
      expect((await verify(DAI)).status).toBe(202);
    },
  );

  it("'*' applies to every contract, an exact contract wins, and a message can be given", async () => {
    sim.verification.setOutcome('*', { reject: 'etherscan_limit' });
    sim.verification.setOutcome(
      { chainId: '1', address: USDC.address.toLowerCase() },
      { reject: 'etherscan_request_failed', message: 'Etherscan API returned HTTP 503 error.' },
    );
    expectError(await verify(DAI), 429, 'etherscan_limit');
    expectError(await verify(GREETER), 429, 'etherscan_limit');
    expectError(
      await verify(USDC),
      502,
      'etherscan_request_failed',
      'Etherscan API returned HTTP 503 error.',
    );
    expect(sim.verification.outcomes()).toHaveLength(2);
    sim.verification.setOutcome('*', null);
    expect((await verify(DAI)).status).toBe(202);
  });

  it('still checks the request first', async () => {
    sim.verification.setOutcome('*', { reject: 'etherscan_limit' }, { times: 1 });
    expectError(await verify({ chainId: '1', address: '0x1234' }), 400, 'invalid_parameter');
    expect(sim.verification.outcomes()).toHaveLength(1);
  });

  it('jobError: accepted, then the job fails with that error (200, isJobCompleted)', async () => {
    sim.verification.setOutcome(DAI, { jobError: 'compiler_error' }, { times: 1 });
    const accepted = await verify(DAI);
    expect(accepted.status).toBe(202);
    const job = await poll(accepted.body.verificationId);
    expect(job).toEqual({
      isJobCompleted: true,
      verificationId: accepted.body.verificationId,
      jobStartTime: expect.stringMatching(SECONDS),
      jobFinishTime: expect.stringMatching(SECONDS),
      contract: {
        match: null,
        creationMatch: null,
        runtimeMatch: null,
        chainId: '1',
        address: DAI.address,
      },
      error: {
        customCode: 'compiler_error',
        message: expect.stringMatching(/^Compiler error\. /),
        errorId: expect.stringMatching(UUID),
      },
    });
    expect(sim.verification.jobs()[0]).toMatchObject({
      state: 'failed',
      errorCode: 'compiler_error',
    });
    expect((await getContract(DAI)).status).toBe(404);
    // Used up: the next job succeeds.
    expect((await verified(DAI)).contract.match).toBe('exact_match');
  });

  it('jobError waits for a request that starts a job', async () => {
    sim.verification.setOutcome('*', { jobError: 'no_match' }, { times: 1 });
    expectError(
      await verify({ chainId: '1', address: UNKNOWN_ADDRESS }),
      404,
      'not_etherscan_verified',
    );
    const job = await verified(USDC);
    expect(job.error?.customCode).toBe('no_match');
  });

  it('refuses bad input', () => {
    const bad: Array<[unknown, unknown]> = [
      ['all', { reject: 'etherscan_limit' }],
      [{ chainId: 1, address: DAI.address }, { reject: 'etherscan_limit' }],
      [{ chainId: '1', address: '0x1234' }, { reject: 'etherscan_limit' }],
      ['*', { reject: 'nope' }],
      ['*', { jobError: 'etherscan_limit' }],
      ['*', { reject: 'etherscan_limit', jobError: 'no_match' }],
      ['*', {}],
      ['*', { reject: 'etherscan_limit', message: 1 }],
    ];
    for (const [target, outcome] of bad) {
      expect(
        () => sim.verification.setOutcome(target as '*', outcome as { reject: 'etherscan_limit' }),
        JSON.stringify([target, outcome]),
      ).toThrow(TypeError);
    }
    expect(() =>
      sim.verification.setOutcome('*', { reject: 'etherscan_limit' }, { times: 0 }),
    ).toThrow(TypeError);
    expect(sim.verification.outcomes()).toEqual([]);
  });
});

describe('job failures from the fixture', () => {
  it('a source the explorer lacks: compiler_error, with the compiler errors', async () => {
    const job = await verified(TOKEN_MANAGER);
    expect(job.error).toEqual({
      customCode: 'compiler_error',
      message: expect.stringContaining('@openzeppelin/contracts/access/Ownable.sol'),
      errorId: expect.stringMatching(UUID),
      errorData: {
        compilerErrors: [
          expect.objectContaining({ severity: 'error', type: 'ParserError', errorCode: '6275' }),
        ],
      },
    });
    expect(job).not.toHaveProperty('compilationTime');
  });

  it("bytecode that does not match: no_match, with Sourcify's message", async () => {
    const job = await verified(COUNTER);
    expect(job.error).toMatchObject({
      customCode: 'no_match',
      message: "The deployed and recompiled bytecode don't match.",
    });
    expect(job.contract.match).toBeNull();
  });

  it('a partial match verified again: the job fails with already_verified', async () => {
    await verified(USDC);
    const again = await verified(USDC);
    expect(again.error).toMatchObject({
      customCode: 'already_verified',
      message: "The contract is already verified and the job didn't yield a better match.",
    });
  });

  it('a better match replaces a partial one', async () => {
    const first = await verified(USDC);
    sim.verification.addContract({ ...USDC, status: 'perfect' });
    const better = await verified(USDC);
    expect(better.contract.match).toBe('exact_match');
    expect(better.contract.matchId).not.toBe(first.contract.matchId);
    expect((await getContract(USDC)).body.match).toBe('exact_match');
  });
});

describe('GET /v2/verify/:verificationId', () => {
  it('answers 404 job_not_found for an unknown id, 400 for one that is not a UUID', async () => {
    const id = crypto.randomUUID();
    expectError(await getJob(id), 404, 'job_not_found', `No verification job found for id ${id}`);
    expectError(
      await getJob('not-a-job'),
      400,
      'invalid_parameter',
      /request\/params\/verificationId/,
    );
    expectError(await getJob(id.toUpperCase()), 400, 'invalid_parameter');
  });

  it('forgets every job on reset', async () => {
    const accepted = await verify(DAI);
    sim.verification.reset();
    expectError(await getJob(accepted.body.verificationId), 404, 'job_not_found');
    expect(sim.verification.jobs()).toEqual([]);
  });
});

describe('GET /v2/contract/:chainId/:address', () => {
  it('answers a contract already in storage, with whole-second verifiedAt', async () => {
    const answer = await getContract({ chainId: '1', address: WETH.address.toLowerCase() });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      matchId: expect.stringMatching(/^\d+$/),
      creationMatch: 'exact_match',
      runtimeMatch: 'exact_match',
      verifiedAt: '2021-09-23T13:22:17Z',
      match: 'exact_match',
      chainId: '1',
      address: WETH.address,
    });
  });

  it('answers 404 with null matches for a contract not verified', async () => {
    const answer = await getContract({ chainId: '1', address: DAI.address.toLowerCase() });
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      match: null,
      creationMatch: null,
      runtimeMatch: null,
      chainId: '1',
      address: DAI.address,
    });
  });

  it('checks chain, address, fields and omit as Sourcify does', async () => {
    expectError(
      await getContract({ chainId: '999999', address: WETH.address }),
      400,
      'unsupported_chain',
      'Chain 999999 not found',
    );
    expectError(await getContract({ chainId: '1', address: '0x12' }), 400, 'invalid_parameter');
    expectError(
      await getContract(WETH, '?fields=abi&omit=userdoc'),
      400,
      'invalid_parameter',
      'Cannot specify both fields and omit',
    );
    expectError(
      await getContract(WETH, '?fields=nope'),
      400,
      'invalid_parameter',
      'Field selector nope is not a valid field',
    );
    expectError(
      await getContract(WETH, '?fields=all,abi'),
      400,
      'invalid_parameter',
      "Cannot specify 'all' with other fields",
    );
    expectError(await getContract(WETH, '?fields=compilation.name.x'), 400, 'invalid_parameter');
    expectError(
      await getContract(WETH, '?limit=1'),
      400,
      'invalid_parameter',
      "Unknown query parameter 'limit'",
    );
    // Fields the simulator does not model are left out: the minimal contract still.
    for (const query of ['?fields=abi', '?fields=abi,compilation.name', '?omit=sources']) {
      const answer = await getContract(WETH, query);
      expect(answer.status, query).toBe(200);
      expect(answer.body.match).toBe('exact_match');
      expect(answer.body).not.toHaveProperty('abi');
    }
  });

  it('answers unsupported_chain with 404 on sourcify-server 3.9.1', async () => {
    sim.verification.setServerVersion('3.9.1');
    expectError(
      await getContract({ chainId: '999999', address: WETH.address }),
      404,
      'unsupported_chain',
      'Chain 999999 not found',
    );
    // A contract that is not verified is a 404 too, but the contract, not an error.
    expect((await getContract(DAI)).body).toMatchObject({ match: null, address: DAI.address });
  });

  it('reports how the contract was compiled when asked (fields=compilation…)', async () => {
    const minimal = await getContract(WETH);
    expect(minimal.body).not.toHaveProperty('compilation');

    const asked = await getContract(
      WETH,
      '?fields=compilation.name,compilation.compilerVersion,compilation.fullyQualifiedName',
    );
    expect(asked.status).toBe(200);
    expect(asked.body).toEqual({
      ...minimal.body,
      compilation: {
        compilerVersion: '0.4.19+commit.c4cbbb05',
        name: 'WETH9',
        fullyQualifiedName: 'WETH9.sol:WETH9',
      },
    });
    for (const query of ['?fields=compilation', '?fields=all', '?omit=abi']) {
      expect((await getContract(WETH, query)).body, query).toMatchObject({
        compilation: {
          language: 'Solidity',
          compiler: 'solc',
          compilerVersion: '0.4.19+commit.c4cbbb05',
          compilerSettings: {},
          name: 'WETH9',
          fullyQualifiedName: 'WETH9.sol:WETH9',
        },
      });
    }
    expect((await getContract(WETH, '?omit=compilation')).body).not.toHaveProperty('compilation');
    expect((await getContract(WETH, '?omit=compilation.compilerSettings')).body).toMatchObject({
      compilation: expect.not.objectContaining({ compilerSettings: expect.anything() }),
    });
    // A contract verified by a job: its compilation too; not verified: no compilation.
    await verified(GREETER);
    expect((await getContract(GREETER, '?fields=compilation.compilerVersion')).body).toMatchObject({
      compilation: { compilerVersion: GREETER.compilerVersion },
    });
    const unverified = await getContract(DAI, '?fields=compilation');
    expect(unverified.status).toBe(404);
    expect(unverified.body).not.toHaveProperty('compilation');
  });
});

describe('faults on APIv2 paths', () => {
  it('an exact path: the fault answers in front of the upstream, nothing is received', async () => {
    const path = `/v2/verify/etherscan/1/${DAI.address}`;
    sim.setFault('verify', path, { kind: 'status', status: 503 }, { times: 1 });
    expect((await verify(DAI)).status).toBe(503);
    expect(sim.verification.received).toEqual([]);
    expect(sim.verification.jobs()).toEqual([]);
    expect((await verify(DAI)).status).toBe(202);
  });

  it("'*': the job status too; a delay fault answers normally afterwards", async () => {
    const accepted = await verify(DAI);
    sim.setFault('verify', '*', { kind: 'status', status: 502, body: '<html>' });
    const faulted = await fetch(`${sim.verifyBaseUrl}/v2/verify/${accepted.body.verificationId}`);
    expect(faulted.status).toBe(502);
    expect(await faulted.text()).toBe('<html>');

    sim.setFault('verify', '*', { kind: 'delay', ms: 200 });
    const started = performance.now();
    const job = await getJob(accepted.body.verificationId);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(job.body.isJobCompleted).toBe(true);
  });

  it('hang: the POST never answers', async () => {
    sim.setFault('verify', `/v2/verify/etherscan/1/${DAI.address}`, { kind: 'hang' });
    await expect(
      fetch(`${sim.verifyBaseUrl}/v2/verify/etherscan/1/${DAI.address}`, {
        method: 'POST',
        signal: AbortSignal.timeout(200),
      }),
    ).rejects.toThrow();
  });
});

describe('verification.received for APIv2', () => {
  it('records every POST with api: v2, the apiKey as sent and the job it started', async () => {
    // A session-API contract that does not match, so DAI is still unverified for v2.
    await call('POST', '/session/verify/etherscan', {
      body: { address: COUNTER.address, chainId: COUNTER.chainId },
    });
    const accepted = await verify(DAI, { apiKey: 'SECRET-KEY' });
    await verify(
      { chainId: '1', address: UNKNOWN_ADDRESS.toUpperCase().replace('0X', '0x') },
      { apiKey: 7 },
    );
    await verify({ chainId: '1', address: UNKNOWN_ADDRESS });

    const [session, first, second, third] = sim.verification.received;
    expect(session).not.toHaveProperty('api');
    expect(first).toEqual({
      api: 'v2',
      explorer: 'etherscan',
      address: DAI.address,
      chainId: '1',
      apiKey: 'SECRET-KEY',
      sessionId: null,
      cookie: undefined,
      verificationId: accepted.body.verificationId,
      status: 202,
    });
    expect(second).toMatchObject({ api: 'v2', apiKey: '7', verificationId: null, status: 400 });
    expect(third).toMatchObject({
      api: 'v2',
      apiKey: undefined,
      verificationId: null,
      status: 404,
    });
    // Job and contract lookups are not verification requests.
    await getJob(accepted.body.verificationId);
    await getContract(DAI);
    expect(sim.verification.received).toHaveLength(4);
  });

  it('is bounded like the request log', async () => {
    const small = await startSimulator({ requestLogCapacity: 2, sourcify: null });
    try {
      for (const apiKey of ['a', 'b', 'c']) {
        await fetch(`${small.verifyBaseUrl}/v2/verify/etherscan/1/${UNKNOWN_ADDRESS}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ apiKey }),
        });
      }
      expect(small.verification.received.map((entry) => entry.apiKey)).toEqual(['b', 'c']);
    } finally {
      await small.close();
    }
  });
});

describe('routing', () => {
  it("answers other methods and unknown v2 paths with Express's 404 page", async () => {
    for (const [method, path] of [
      ['GET', `/v2/verify/etherscan/1/${DAI.address}`],
      ['POST', `/v2/contract/1/${DAI.address}`],
      ['GET', '/v2/nothing'],
    ] as const) {
      const response = await fetch(`${sim.verifyBaseUrl}${path}`, { method });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await response.text()).toContain(`<pre>Cannot ${method} ${path}</pre>`);
    }
    expect(sim.verification.received).toEqual([]);
  });

  it('routes case-insensitively, as Express does', async () => {
    expect((await call('POST', `/V2/Verify/Etherscan/1/${DAI.address}`, { body: {} })).status).toBe(
      202,
    );
  });
});

describe('the job table', () => {
  it('keeps the latest jobCapacity jobs; older ones answer 404', async () => {
    const upstream = createVerificationUpstream({ jobCapacity: 2 });
    upstream.setJobDelay(null);
    const ids: string[] = [];
    for (const contract of [DAI, USDC, GREETER]) {
      const answer = await upstream.handle(
        request('POST', `/v2/verify/etherscan/${contract.chainId}/${contract.address}`),
      );
      expect(answer.status).toBe(202);
      ids.push(JSON.parse(answer.body.toString()).verificationId);
    }
    expect(upstream.jobs().map((job) => job.verificationId)).toEqual(ids.slice(1));
    expect((await upstream.handle(request('GET', `/v2/verify/${ids[0]}`))).status).toBe(404);
    expect((await upstream.handle(request('GET', `/v2/verify/${ids[2]}`))).status).toBe(200);
    // The dropped job no longer holds its contract.
    expect(
      (await upstream.handle(request('POST', `/v2/verify/etherscan/1/${DAI.address}`))).status,
    ).toBe(202);
  });
});

describe('control API: /_simulator/verification/v2', () => {
  const control = (method: string, body?: unknown) =>
    fetch(`${sim.origin}/_simulator/verification/v2`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
    });

  it('reports the delay, jobs and outcomes, without API keys', async () => {
    await verify(DAI, { apiKey: 'SECRET-KEY' });
    const response = await control('GET');
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain('SECRET-KEY');
    expect(JSON.parse(text)).toEqual({
      jobDelayMs: DEFAULT_JOB_DELAY_MS,
      jobs: [expect.objectContaining({ address: DAI.address, state: 'pending' })],
      outcomes: [],
    });
  });

  it('sets the delay and outcomes, checking everything first', async () => {
    const set = await control('PUT', {
      jobDelayMs: null,
      outcomes: [
        {
          target: { chainId: '1', address: DAI.address },
          outcome: { reject: 'etherscan_limit' },
          times: 1,
        },
        { target: '*', outcome: { jobError: 'no_match' } },
      ],
    });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({
      jobDelayMs: null,
      outcomes: [
        {
          target: { chainId: '1', address: DAI.address },
          outcome: { reject: 'etherscan_limit' },
          remaining: 1,
        },
        { target: '*', outcome: { jobError: 'no_match' }, remaining: null },
      ],
    });
    expectError(await verify(DAI), 429, 'etherscan_limit');
    const cleared = await control('PUT', { outcomes: [{ target: '*', outcome: null }] });
    expect((await cleared.json()).outcomes).toEqual([]);

    for (const bad of [
      {},
      { jobDelayMs: -5 },
      { jobDelayMs: '100' },
      { outcomes: {} },
      { outcomes: [{ target: '*' }] },
      { outcomes: [{ target: '*', outcome: { reject: 'nope' } }] },
      { outcomes: [{ target: '*', outcome: { reject: 'etherscan_limit' }, times: -1 }] },
      { outcomes: [{ target: '*', outcome: null, extra: 1 }] },
      { jobDelayMs: 0, outcomes: [{ target: 'x', outcome: null }] },
      { jobs: [] },
    ]) {
      const response = await control('PUT', bad);
      expect(response.status, JSON.stringify(bad)).toBe(400);
      expect(await response.json()).toMatchObject({ error: expect.any(String) });
    }
    // Nothing changed by the refused requests.
    expect(sim.verification.jobDelayMs).toBeNull();
    expect((await control('DELETE')).status).toBe(405);
  });

  it('DELETE /_simulator/verification resets APIv2 too', async () => {
    sim.verification.setJobDelay(null);
    sim.verification.setOutcome('*', { reject: 'etherscan_limit' });
    await fetch(`${sim.origin}/_simulator/verification`, { method: 'DELETE' });
    expect(sim.verification.jobDelayMs).toBe(DEFAULT_JOB_DELAY_MS);
    expect(sim.verification.outcomes()).toEqual([]);
  });
});
