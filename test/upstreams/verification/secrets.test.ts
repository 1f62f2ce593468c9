import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Fault, SourcifyServerVersion } from '../../../simulator/src/server.js';
import {
  fixtureContract,
  VERIFIABLE_CONTRACTS,
} from '../../../simulator/src/verification/fixture.js';
import type { VerifyApi } from '../../../src/upstreams/verification/model.js';
import { eventually } from '../../helpers/eventually.js';
import { type Harness, startHarness } from '../../helpers/harness.js';

const API_KEY = 'SECRET-KEY-7f3a9c1e5b2d4f6a8c0e';
const [contract] = VERIFIABLE_CONTRACTS;
if (!contract) throw new Error('the simulator knows a contract');

const input = { address: contract.address, chainId: contract.chainId, apiKey: API_KEY };

const VERIFY = /* GraphQL */ `
  mutation ($input: VerifyContractInput!) {
    verifyContract(input: $input) {
      __typename
      ... on Error { message }
      ... on VerificationResult { contracts { name statusMessage } unused }
    }
  }
`;

/*
 * One gateway for the file, at trace level, that asks the server which API it speaks
 * (`VERIFY_API=auto`, the default): each test puts the simulator in the era of the API it is about
 * and has the gateway speak it (`speaking`). A short timeout, for the upstream that hangs.
 */
let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({
    logLevel: 'trace',
    env: { UPSTREAM_TIMEOUT_MS: 200, VERIFY_POLL_INTERVAL_MS: 10 },
  });
});
afterAll(() => harness.close());

/** A server that speaks only `api`. */
const ERA: Record<VerifyApi, SourcifyServerVersion> = { v2: 'latest', session: 'session-only' };
const PRIMER = fixtureContract('FiatTokenProxy');
/**
 * The simulator a server of `api`'s era and the gateway speaking it: a verification (of a contract
 * no test verifies, without a key) in the API it last spoke fails on a server of the other era,
 * which has it ask the server again.
 */
async function speaking(api: VerifyApi): Promise<void> {
  harness.simulator.clearFaults();
  harness.simulator.verification.setServerVersion(ERA[api]);
  await eventually(async () => {
    const { body } = await harness.execute<{ verifyContract: { __typename: string } }>(VERIFY, {
      input: { address: PRIMER.address, chainId: PRIMER.chainId },
    });
    return /^Verification(Result|Pending)$/.test(body.data?.verifyContract.__typename ?? '');
  });
}

describe('the explorer API key', () => {
  const responses: string[] = [];
  beforeEach(() => speaking('session'));

  async function verify(input: Record<string, unknown>) {
    const response = await harness.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: VERIFY, variables: { input } }),
    });
    const text = await response.text();
    responses.push(text, JSON.stringify([...response.headers]));
    return JSON.parse(text) as {
      data?: { verifyContract: { __typename: string; message?: string } };
    };
  }

  const faults: [string, Fault][] = [
    ['a 503', { kind: 'status', status: 503 }],
    [
      'a 429',
      { kind: 'status', status: 429, body: JSON.stringify({ error: `limit for ${API_KEY}` }) },
    ],
    [
      'a 400 echoing the key',
      {
        kind: 'status',
        status: 400,
        body: JSON.stringify({ error: `Invalid API key ${API_KEY}` }),
      },
    ],
    ['a timeout', { kind: 'hang' }],
    ['a reset', { kind: 'reset' }],
    ['HTML', { kind: 'html' }],
  ];

  it('reaches the upstream', async () => {
    const result = await verify(input);
    expect(result.data?.verifyContract.__typename).toBe('VerificationResult');
    expect(harness.simulator.verification.received.at(-1)?.apiKey).toBe(API_KEY);
  });

  for (const [name, fault] of faults) {
    it(`stays out of the answer to ${name}`, async () => {
      harness.simulator.setFault('verify', '/session/verify/etherscan', fault);
      const result = await verify(input);
      harness.simulator.clearFaults();
      expect(result.data?.verifyContract.__typename).not.toBe('VerificationResult');
      expect(JSON.stringify(result)).not.toContain(API_KEY);
    });
  }

  it('stays out of the answer to invalid input', async () => {
    const result = await verify({ ...input, address: 'nope' });
    expect(result.data?.verifyContract.__typename).toBe('InvalidInputError');
  });

  it('is redacted where the upstream echoed it', async () => {
    harness.simulator.setFault('verify', '/session/verify/etherscan', {
      kind: 'status',
      status: 400,
      body: JSON.stringify({ error: `Invalid API key ${API_KEY}` }),
    });
    const result = await verify(input);
    harness.simulator.clearFaults();
    expect(result.data?.verifyContract.message).toBe('Invalid API key [redacted]');
  });

  it('never appears in any response or log line, at trace level', () => {
    expect(harness.rawLogs.length).toBeGreaterThan(10);
    for (const line of harness.rawLogs) expect(line).not.toContain(API_KEY);
    for (const text of responses) expect(text).not.toContain(API_KEY);
  });
});

describe('the explorer API key with APIv2', () => {
  it('reaches the upstream and appears in no response or log line', async () => {
    await speaking('v2');
    const logged = harness.rawLogs.length;
    const send = async () => {
      const response = await harness.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: VERIFY, variables: { input } }),
      });
      return response.text();
    };
    const answers = [await send()];
    harness.simulator.verification.setOutcome('*', {
      reject: 'etherscan_request_failed',
      message: `Etherscan said: invalid key ${API_KEY}`,
    });
    answers.push(await send());
    harness.simulator.verification.setOutcome('*', null);
    harness.simulator.setFault('verify', '*', { kind: 'status', status: 503 });
    answers.push(await send());

    expect(harness.simulator.verification.received.some((entry) => entry.apiKey === API_KEY)).toBe(
      true,
    );
    expect(answers[1]).toContain('[redacted]');
    for (const text of answers) expect(text).not.toContain(API_KEY);
    expect(harness.rawLogs.length).toBeGreaterThan(logged);
    for (const line of harness.rawLogs) expect(line).not.toContain(API_KEY);
  });
});
