import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type Simulator,
  type SourcifyV2Contract,
  type SourcifyV2ErrorBody,
  type SourcifyV2Job,
  startSimulator,
} from '../src/server.js';
import { fixtureContract } from '../src/verification/fixture.js';

/*
 * Today's Sourcify (the simulator's default server): APIv2 only, verification from source and
 * from metadata, the bulk lookups, ETags on lookups, stuck jobs and the reaper's codes.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const GREETER = fixtureContract('Greeter');
const DAI = fixtureContract('Dai');
const WETH = fixtureContract('WETH9');
const TOKEN_MANAGER = fixtureContract('TokenManager');
const NOBODY = '0x0000000000000000000000000000000000000001';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());
afterEach(() => {
  sim.clearFaults();
  sim.verification.reset();
  sim.resetRequests();
});

async function call<T = unknown>(
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
) {
  const response = await fetch(`${sim.verifyBaseUrl}${path}`, {
    method,
    headers: {
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    body: options.body === undefined ? null : JSON.stringify(options.body),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: (text && response.headers.get('content-type')?.includes('json')
      ? JSON.parse(text)
      : undefined) as T,
  };
}

const stdJson = (contract = GREETER, extra: Record<string, unknown> = {}) => ({
  stdJsonInput: {
    language: 'Solidity',
    sources: { [contract.compiledPath]: { content: '// SPDX-License-Identifier: MIT' } },
    settings: { optimizer: { enabled: false } },
  },
  compilerVersion: contract.compilerVersion,
  contractIdentifier: `${contract.compiledPath}:${contract.name}`,
  ...extra,
});

const metadata = (contract = GREETER, sources?: Record<string, string>) => ({
  metadata: {
    compiler: { version: contract.compilerVersion },
    language: 'Solidity',
    settings: { compilationTarget: { [contract.compiledPath]: contract.name } },
    sources: { [contract.compiledPath]: { keccak256: '0x00' } },
  },
  sources: sources ?? { [contract.compiledPath]: 'contract Greeter {}' },
});

/** Submits, lets the job complete at the next request, and reads it. */
async function finished(path: string, body: unknown): Promise<SourcifyV2Job> {
  sim.verification.setJobDelay(0);
  const submitted = await call<{ verificationId: string }>('POST', path, { body });
  expect(submitted.status).toBe(202);
  return (await call<SourcifyV2Job>('GET', `/v2/verify/${submitted.body.verificationId}`)).body;
}

describe("the default server: today's Sourcify", () => {
  it('has no session API, and APIv2 answers', async () => {
    expect(sim.verification.serverVersion).toBe('latest');
    const session = await call('POST', '/session/verify/etherscan', {
      body: { address: GREETER.address, chainId: GREETER.chainId },
    });
    expect(session.status).toBe(404);
    expect(session.text).toContain('Cannot POST /session/verify/etherscan');
    expect(session.headers.get('set-cookie')).toBeNull();
    expect((await call('GET', `/v2/contract/1/${WETH.address}`)).status).toBe(200);
  });

  it('is chosen at start, and reset comes back to it', async () => {
    const old = await startSimulator({ sourcify: '3.9.1' });
    old.verification.setServerVersion('latest');
    old.verification.reset();
    expect(old.verification.serverVersion).toBe('3.9.1');
    await old.close();
  });

  it('session-only has the session API and no APIv2 route', async () => {
    const old = await startSimulator({ sourcify: 'session-only' });
    const job = await fetch(`${old.verifyBaseUrl}/v2/verify/${crypto.randomUUID()}`);
    expect(job.status).toBe(404);
    expect(await job.text()).toContain('Cannot GET /v2/verify/');
    const verified = await fetch(`${old.verifyBaseUrl}/session/verify/etherscan`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address: GREETER.address, chainId: GREETER.chainId }),
    });
    expect(verified.status).toBe(200);
    await old.close();
  });
});

describe('POST /v2/verify/{chainId}/{address}: standard JSON input', () => {
  const path = `/v2/verify/${GREETER.chainId}/${GREETER.address}`;

  it('verifies a matching input: the job reports the match, its compilation time and the explorers it submitted to', async () => {
    const job = await finished(path, stdJson());
    expect(job).toMatchObject({
      isJobCompleted: true,
      contract: { match: 'exact_match', chainId: GREETER.chainId, address: GREETER.address },
      compilationTime: expect.stringMatching(/^\d+$/),
      externalVerifications: {
        etherscan: { verificationId: expect.any(String), statusUrl: expect.any(String) },
        blockscout: { verificationId: expect.any(String) },
        routescan: { error: expect.any(String) },
      },
    });
    expect(job.error).toBeUndefined();
    const [received] = sim.verification.received;
    expect(received).toMatchObject({ api: 'v2', explorer: 'std-json', status: 202 });
    expect(received?.bytes).toBeGreaterThan(100);
  });

  it.each([
    ['another contract name', { contractIdentifier: `${GREETER.compiledPath}:Other` }, 'no_match'],
    ['another compiler', { compilerVersion: '0.8.25+commit.b61c2a91' }, 'no_match'],
    [
      'a path the sources lack',
      { contractIdentifier: 'contracts/Missing.sol:Greeter' },
      'contract_not_found_in_compiler_output',
    ],
  ])('fails the job for %s', async (_case, extra, code) => {
    const job = await finished(path, stdJson(GREETER, extra));
    expect(job.error?.customCode).toBe(code);
    expect(job.contract.match).toBeNull();
  });

  it('fails an address without a contract as contract_not_deployed', async () => {
    const job = await finished(`/v2/verify/1/${NOBODY}`, stdJson());
    expect(job.error?.customCode).toBe('contract_not_deployed');
  });

  it('fails sources that miss an import as compiler_error with the compiler errors', async () => {
    const job = await finished(
      `/v2/verify/${TOKEN_MANAGER.chainId}/${TOKEN_MANAGER.address}`,
      stdJson(TOKEN_MANAGER),
    );
    expect(job.error?.customCode).toBe('compiler_error');
    expect(job.error?.errorData).toMatchObject({ compilerErrors: [{ type: 'ParserError' }] });
  });

  it.each([
    [{}, "request/body must have required property 'stdJsonInput'"],
    [{ ...stdJson(), stdJsonInput: 'x' }, 'request/body/stdJsonInput must be object'],
    [
      { ...stdJson(), compilerVersion: 'latest' },
      'request/body/compilerVersion must match pattern "^v?\\d+\\.\\d+\\.\\d+.*$"',
    ],
    [
      { ...stdJson(), creationTransactionHash: '0xABC' },
      'request/body/creationTransactionHash must match pattern "(\\b0x[a-f0-9]{64}\\b)"',
    ],
  ])('refuses a body the validator refuses: %j', async (body, message) => {
    const answer = await call<SourcifyV2ErrorBody>('POST', path, { body });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ customCode: 'invalid_parameter', message });
    expect(sim.verification.jobs()).toHaveLength(0);
  });

  it('answers 409 already_verified for an exact match, 429 while a job runs', async () => {
    const verified = await call<SourcifyV2ErrorBody>('POST', `/v2/verify/1/${WETH.address}`, {
      body: stdJson(WETH),
    });
    expect(verified.status).toBe(409);
    expect(verified.body.customCode).toBe('already_verified');
    sim.verification.setJobDelay(null);
    expect((await call('POST', path, { body: stdJson() })).status).toBe(202);
    const again = await call<SourcifyV2ErrorBody>('POST', path, { body: stdJson() });
    expect(again.status).toBe(429);
    expect(again.body.customCode).toBe('duplicate_verification_request');
  });
});

describe('POST /v2/verify/metadata/{chainId}/{address}', () => {
  const path = `/v2/verify/metadata/${GREETER.chainId}/${GREETER.address}`;

  it('verifies metadata and its sources', async () => {
    const job = await finished(path, metadata());
    expect(job.contract.match).toBe('exact_match');
    expect(sim.verification.received[0]).toMatchObject({ explorer: 'metadata', status: 202 });
  });

  it('fails missing sources as missing_source, naming them', async () => {
    const job = await finished(path, metadata(GREETER, { 'other.sol': 'x' }));
    expect(job.error?.customCode).toBe('missing_source');
    expect(job.error?.message).toContain(GREETER.compiledPath);
  });

  it('fails a metadata without one compilation target as invalid_compilation_target', async () => {
    const body = metadata();
    body.metadata.settings.compilationTarget = {};
    expect((await finished(path, body)).error?.customCode).toBe('invalid_compilation_target');
  });

  it('refuses sources that are not strings', async () => {
    const answer = await call<SourcifyV2ErrorBody>('POST', path, {
      body: { metadata: {}, sources: { 'a.sol': 1 } },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe('request/body/sources/a.sol must be string');
  });
});

describe('stuck jobs and the reaper', () => {
  it('keeps a stuck job running whatever the delay, until the reaper abandons it', async () => {
    sim.verification.setOutcome(
      { chainId: GREETER.chainId, address: GREETER.address },
      { stuck: true },
    );
    sim.verification.setJobDelay(0);
    const { body } = await call<{ verificationId: string }>(
      'POST',
      `/v2/verify/${GREETER.chainId}/${GREETER.address}`,
      { body: stdJson() },
    );
    const job = () => call<SourcifyV2Job>('GET', `/v2/verify/${body.verificationId}`);
    expect((await job()).body.isJobCompleted).toBe(false);
    expect((await job()).body.isJobCompleted).toBe(false);
    sim.verification.abandonStuckJobs();
    expect((await job()).body).toMatchObject({
      isJobCompleted: true,
      error: { customCode: 'job_abandoned' },
    });
  });

  it.each(['compiler_timeout', 'compiler_out_of_memory', 'job_abandoned'] as const)(
    'fails a job with %s when scripted',
    async (code) => {
      sim.verification.setOutcome('*', { jobError: code });
      const job = await finished(`/v2/verify/${GREETER.chainId}/${GREETER.address}`, stdJson());
      expect(job.error).toMatchObject({ customCode: code, errorId: expect.stringMatching(UUID) });
    },
  );
});

describe('GET /v2/contract/all-chains/{address} and /v2/contracts/{chainId}', () => {
  it('lists an address on every chain it is verified on; 404 with an empty list when on none', async () => {
    const found = await call<{ results: SourcifyV2Contract[] }>(
      'GET',
      `/v2/contract/all-chains/${WETH.address.toLowerCase()}`,
    );
    expect(found.status).toBe(200);
    expect(found.body.results).toEqual([
      expect.objectContaining({ chainId: '1', address: WETH.address, match: 'exact_match' }),
    ]);
    const none = await call('GET', `/v2/contract/all-chains/${NOBODY}`);
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ results: [] });
  });

  it("pages a chain's contracts newest first by matchId", async () => {
    // Dai and Greeter get matches after WETH's.
    await finished(`/v2/verify/${DAI.chainId}/${DAI.address}`, stdJson(DAI));
    const all = await call<{ results: SourcifyV2Contract[] }>('GET', '/v2/contracts/1?limit=200');
    const ids = all.body.results.map((contract) => Number(contract.matchId));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(all.body.results[0]?.address).toBe(DAI.address);
    const first = await call<{ results: SourcifyV2Contract[] }>(
      'GET',
      '/v2/contracts/1?sort=desc&limit=1',
    );
    expect(first.body.results).toHaveLength(1);
    const next = await call<{ results: SourcifyV2Contract[] }>(
      'GET',
      `/v2/contracts/1?sort=desc&limit=1&afterMatchId=${first.body.results[0]?.matchId}`,
    );
    expect(next.body.results[0]?.matchId).toBe(all.body.results[1]?.matchId);
  });

  it.each([
    ['limit=0', 'request/query/limit must be >= 1'],
    ['limit=201', 'request/query/limit must be <= 200'],
    ['sort=up', 'request/query/sort must be equal to one of the allowed values: asc, desc'],
    ['afterMatchId=x', 'request/query/afterMatchId must match pattern "^\\d+$"'],
    ['page=2', "Unknown query parameter 'page'"],
  ])('refuses %s', async (query, message) => {
    const answer = await call<SourcifyV2ErrorBody>('GET', `/v2/contracts/1?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe(message);
  });
});

describe('ETags on lookups', () => {
  it('answers a conditional lookup whose tag still holds with 304 and no body, and counts it', async () => {
    const path = `/v2/contract/1/${WETH.address}`;
    const first = await call('GET', path);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^W\/"[0-9a-f]+-[\w+/]{27}"$/);
    const again = await call('GET', path, { headers: { 'if-none-match': etag ?? '' } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(sim.verification.notModified).toBe(1);
    // Another answer, another tag: the whole answer again.
    const other = await call('GET', `${path}?fields=compilation.name`, {
      headers: { 'if-none-match': etag ?? '' },
    });
    expect(other.status).toBe(200);
  });

  it('never answers 304 for a 404', async () => {
    const path = `/v2/contract/1/${NOBODY}`;
    const first = await call('GET', path);
    expect(first.status).toBe(404);
    const again = await call('GET', path, {
      headers: { 'if-none-match': first.headers.get('etag') ?? '' },
    });
    expect(again.status).toBe(404);
  });
});

describe('requests in flight', () => {
  it('counts the most requests under a prefix at once', async () => {
    const prefix = '/verify/v2/contract/';
    expect(sim.concurrency(prefix)).toEqual({ current: 0, peak: 0 });
    sim.setFault('verify', '*', { kind: 'delay', ms: 50 });
    await Promise.all(
      Array.from({ length: 3 }, () => fetch(`${sim.verifyBaseUrl}/v2/contract/1/${WETH.address}`)),
    );
    expect(sim.concurrency(prefix)).toEqual({ current: 0, peak: 3 });
    sim.resetRequests();
    expect(sim.concurrency(prefix).peak).toBe(0);
  });
});
