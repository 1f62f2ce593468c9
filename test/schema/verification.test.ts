import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import type { ConfigVariableName } from '../../src/config.js';
import type { Harness } from '../helpers/harness.js';
import { sessionEra } from '../helpers/session-era.js';
import { sharedHarnesses } from '../helpers/shared-harness.js';
import { subscribeSse } from '../helpers/subscriptions.js';

const VERIFY_PATH = '/verify/session/verify/etherscan';

const VERIFY = /* GraphQL */ `
  mutation Verify($input: VerifyContractInput!) {
    verifyContract(input: $input) {
      __typename
      ... on Error { message }
      ... on InvalidInputError { field }
      ... on VerificationRejectedError { status }
      ... on RateLimitedError { retryAfterSeconds }
      ... on VerificationResult {
        unused
        contracts {
          verificationId compiledPath name compilerVersion address chainId
          files { found missing invalid }
          status statusMessage storageTimestamp
        }
      }
    }
  }
`;

interface Contract {
  address: string | null;
  chainId: string | null;
  status: string;
  compilerVersion: string | null;
  statusMessage: string | null;
  storageTimestamp: string | null;
  files: { found: string[]; missing: string[]; invalid: string[] };
}
interface VerifyResult {
  verifyContract: {
    __typename: string;
    message?: string;
    field?: string;
    status?: number;
    retryAfterSeconds?: number | null;
    contracts?: Contract[];
    unused?: string[];
  };
}

/** A browser-like client: keeps the cookies the gateway sets and sends them back. */
function client(harness: Harness) {
  const jar = new Map<string, string>();
  return {
    jar,
    async verify(input: Record<string, unknown>) {
      const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
      const response = await harness.execute<VerifyResult>(
        VERIFY,
        { input },
        {
          headers: cookie ? { cookie } : {},
        },
      );
      for (const header of response.headers.getSetCookie()) {
        const [pair = ''] = header.split(';');
        const [name = '', value = ''] = pair.split('=');
        if (value) jar.set(name, value);
        else jar.delete(name);
      }
      return response;
    },
  };
}

const [first, second, third] = VERIFIABLE_CONTRACTS;
if (!first || !second || !third) throw new Error('the simulator knows at least three contracts');

/*
 * One gateway for the file, reset through the simulator before each test. It fetches the service's
 * chain list again on every read (VERIFY_CHAINS_TTL_MS 0), and then remembers a failed fetch no
 * longer (a failure is never trusted longer than a list): a test's own list is the one read, and
 * a test of a service without a list hides it (`setChains(null)`) until the next test's reset.
 */
const shared = sharedHarnesses();
afterAll(() => shared.close());
/** A gateway of `sessionEra` with `env` beside. */
function sessionGateway(env: Partial<Record<ConfigVariableName, string | number>> = {}) {
  const options = sessionEra({ env });
  if (typeof options.env === 'function') throw new TypeError('sessionEra names its env');
  return shared.use({ ...options, env: options.env });
}
const withChains = () => sessionGateway({ VERIFY_CHAINS_TTL_MS: 0 });
/** The gateway, its service without a chain list (GET /chains answers 404) until the next reset. */
async function withoutChains(): Promise<Harness> {
  const harness = await withChains();
  harness.simulator.verification.setChains(null);
  return harness;
}

describe('Mutation.verifyContract', () => {
  let harness: Harness;
  beforeEach(async () => {
    harness = await withChains();
  });

  it('verifies a contract and sets an HttpOnly, SameSite=Lax session cookie on the GraphQL path', async () => {
    const { body, headers } = await client(harness).verify({
      address: first.address,
      chainId: first.chainId,
    });
    expect(body.errors).toBeUndefined();
    const result = body.data?.verifyContract;
    expect(result?.__typename).toBe('VerificationResult');
    expect(result?.contracts).toHaveLength(1);
    const [contract] = result?.contracts ?? [];
    expect(contract?.address).toBe(first.address);
    expect(contract?.chainId).toBe(first.chainId);
    expect(['PERFECT', 'PARTIAL']).toContain(contract?.status);
    expect(Array.isArray(contract?.files.missing)).toBe(true);
    expect(result?.unused).toEqual([]);

    const [cookie] = headers.getSetCookie();
    expect(cookie).toMatch(/^verify_session=[\w-]+;/);
    expect(cookie).toMatch(/Path=\/graphql/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/sourcify_vid/);
  });

  it('keeps each client in its own upstream session', async () => {
    const alice = client(harness);
    const bob = client(harness);

    const a1 = await alice.verify({ address: first.address, chainId: first.chainId });
    const b1 = await bob.verify({ address: second.address, chainId: second.chainId });
    const a2 = await alice.verify({ address: third.address, chainId: third.chainId });

    const addresses = (result: typeof a1) =>
      (result.body.data?.verifyContract.contracts ?? []).map((c) => c.address).sort();
    expect(addresses(a1)).toEqual([first.address]);
    expect(addresses(b1)).toEqual([second.address]);
    expect(addresses(a2)).toEqual([first.address, third.address].sort());

    const received = harness.simulator.verification.received;
    expect(received).toHaveLength(3);
    const [ra1, rb1, ra2] = received;
    expect(ra1?.cookie).toBeUndefined();
    expect(rb1?.cookie).toBeUndefined();
    expect(ra2?.sessionId).toBe(ra1?.sessionId);
    expect(rb1?.sessionId).not.toBe(ra1?.sessionId);
    const sessions = harness.simulator.verification.sessions();
    expect(sessions.get(rb1?.sessionId ?? '')).toEqual([second.address]);
  });

  it('starts a new session for a cookie that is not one of ours', async () => {
    const { body } = await harness.execute<VerifyResult>(
      VERIFY,
      { input: { address: first.address, chainId: first.chainId } },
      { headers: { cookie: 'verify_session=%%%not-base64; other=1' } },
    );
    expect(body.data?.verifyContract.__typename).toBe('VerificationResult');
    expect(harness.simulator.verification.received[0]?.cookie).toBeUndefined();
  });

  it.each([
    ['a short address', { address: '0x1234', chainId: '1' }, 'address', /40 hexadecimal digits/],
    [
      'a bad checksum',
      { address: `0x${'aB'.repeat(20)}`, chainId: '1' },
      'address',
      /EIP-55 checksum/,
    ],
    ['a huge address', { address: `0x${'a'.repeat(200_000)}`, chainId: '1' }, 'address', /40/],
    ['a chain name', { address: first.address, chainId: 'mainnet' }, 'chainId', /decimal chain id/],
    [
      'an API key with spaces',
      { address: first.address, chainId: first.chainId, apiKey: 'my key' },
      'apiKey',
      /printable characters/,
    ],
    [
      'an unsupported chain',
      { address: first.address, chainId: '999999999' },
      'chainId',
      /Chain 999999999 is not supported/,
    ],
  ])('refuses %s before anything goes upstream', async (_name, input, field, message) => {
    const { body } = await client(harness).verify(input);
    expect(body.errors).toBeUndefined();
    expect(body.data?.verifyContract).toMatchObject({ __typename: 'InvalidInputError', field });
    expect(body.data?.verifyContract.message).toMatch(message);
    expect(harness.simulator.requestCount(VERIFY_PATH)).toBe(0);
  });

  it('accepts an all-lowercase address', async () => {
    const { body } = await client(harness).verify({
      address: first.address.toLowerCase(),
      chainId: first.chainId,
    });
    expect(body.data?.verifyContract.__typename).toBe('VerificationResult');
  });

  it('refuses a chain that is supported but not through the explorer', async () => {
    const chains = harness.simulator.verification.chains;
    const noExplorer = chains.find((chain) => chain.supported && !chain.etherscanAPI);
    if (!noExplorer) throw new Error('the simulator lists such a chain');
    const { body } = await client(harness).verify({
      address: first.address,
      chainId: String(noExplorer.chainId),
    });
    expect(body.data?.verifyContract).toMatchObject({
      __typename: 'InvalidInputError',
      field: 'chainId',
    });
    expect(body.data?.verifyContract.message).toContain(
      'does not support verification from etherscan',
    );
  });

  it("answers a contract the explorer has not verified with the service's own message and status", async () => {
    const { body } = await client(harness).verify({
      address: '0x0000000000000000000000000000000000000001',
      chainId: '1',
    });
    expect(body.data?.verifyContract).toMatchObject({
      __typename: 'VerificationRejectedError',
      status: 404,
      message: 'This contract is not verified on Etherscan.',
    });
  });

  it('answers an empty statusMessage as null, and a failed verification with its message', async () => {
    const counter = VERIFIABLE_CONTRACTS.find((contract) => contract.name === 'Counter');
    if (!counter) throw new Error('the simulator knows Counter');
    const alice = client(harness);
    const fresh = await alice.verify({ address: second.address, chainId: second.chainId });
    const [verified] = fresh.body.data?.verifyContract.contracts ?? [];
    expect(verified).toMatchObject({ status: 'PERFECT', storageTimestamp: null });
    expect(verified?.statusMessage).toBeNull();
    // The service sent "".
    const upstream = await fetch(`${harness.simulator.verifyBaseUrl}/session/verify/etherscan`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address: third.address, chainId: third.chainId }),
    });
    const { contracts } = (await upstream.json()) as { contracts: { statusMessage: string }[] };
    expect(contracts[0]?.statusMessage).toBe('');

    const failed = await alice.verify({ address: counter.address, chainId: counter.chainId });
    const last = failed.body.data?.verifyContract.contracts?.at(-1);
    expect(last).toMatchObject({
      status: 'ERROR',
      statusMessage: "The deployed and recompiled bytecode don't match.",
    });
  });

  it("fills compilerVersion, which the session API leaves out, from the service's lookup of matched contracts", async () => {
    const counter = VERIFIABLE_CONTRACTS.find((contract) => contract.name === 'Counter');
    if (!counter) throw new Error('the simulator knows Counter');
    const alice = client(harness);
    await alice.verify({ address: first.address, chainId: first.chainId });
    const { body } = await alice.verify({ address: counter.address, chainId: counter.chainId });
    expect(body.errors).toBeUndefined();
    const [weth, failed] = body.data?.verifyContract.contracts ?? [];
    expect(weth).toMatchObject({ address: first.address, compilerVersion: first.compilerVersion });
    // A contract that did not match has no verified compilation to look up.
    expect(failed).toMatchObject({
      address: counter.address,
      status: 'ERROR',
      compilerVersion: null,
    });
    // One lookup per operation (each verification asks again), none for the failed contract.
    const lookups = harness.simulator.requests.filter((r) =>
      r.path.startsWith('/verify/v2/contract/'),
    );
    expect(lookups.map((r) => r.path)).toEqual([
      `/verify/v2/contract/${first.chainId}/${first.address}`,
      `/verify/v2/contract/${first.chainId}/${first.address}`,
    ]);
    expect(new URLSearchParams(lookups[0]?.search).get('fields')).toContain(
      'compilation.compilerVersion',
    );
  });

  it("keeps the service's own message on a 5xx", async () => {
    harness.simulator.setFault('verify', '/session/verify/etherscan', {
      kind: 'status',
      status: 500,
      body: JSON.stringify({ error: 'Out of memory', message: 'Out of memory' }),
    });
    const { body } = await client(harness).verify({
      address: first.address,
      chainId: first.chainId,
    });
    expect(body.data?.verifyContract).toEqual({
      __typename: 'UpstreamUnavailableError',
      message:
        'The verification service POST /session/verify/etherscan is unavailable: it answered HTTP 500: Out of memory',
    });
  });

  it('answers a contract already in the session as rejected: nothing new to add', async () => {
    const alice = client(harness);
    await alice.verify({ address: first.address, chainId: first.chainId });
    const { body } = await alice.verify({ address: first.address, chainId: first.chainId });
    expect(body.data?.verifyContract).toMatchObject({
      __typename: 'VerificationRejectedError',
      status: 400,
    });
    expect(body.data?.verifyContract.message).toMatch(/didn't add any new file/);
  });

  it('answers 429 as RateLimitedError with Retry-After in seconds, or null without it', async () => {
    harness.simulator.setFault(
      'verify',
      '/session/verify/etherscan',
      {
        kind: 'status',
        status: 429,
        headers: { 'retry-after': '30' },
        body: JSON.stringify({ error: 'Etherscan API rate limit reached, try later' }),
      },
      { times: 1 },
    );
    const limited = await client(harness).verify({
      address: first.address,
      chainId: first.chainId,
    });
    expect(limited.body.data?.verifyContract).toEqual({
      __typename: 'RateLimitedError',
      message: 'Etherscan API rate limit reached, try later',
      retryAfterSeconds: 30,
    });

    harness.simulator.setFault('verify', '/session/verify/etherscan', {
      kind: 'status',
      status: 429,
    });
    const unknown = await client(harness).verify({
      address: first.address,
      chainId: first.chainId,
    });
    expect(unknown.body.data?.verifyContract.retryAfterSeconds).toBeNull();
  });

  const ANSWERED = 'The verification service POST /session/verify/etherscan';
  // No answer at all: said by what the user configured, not by a path of the API.
  const UNREACHABLE = 'The verification service at VERIFY_BASE_URL is unreachable';
  it.each([
    ['a 503', { kind: 'status', status: 503 } as const, ANSWERED, /HTTP 503/],
    ['an HTML page', { kind: 'html' } as const, ANSWERED, /not valid JSON/],
    ['an empty 200', { kind: 'empty' } as const, ANSWERED, /body is empty/],
    ['a reset', { kind: 'reset' } as const, UNREACHABLE, /connection failed/],
    ['no answer in time', { kind: 'hang' } as const, UNREACHABLE, /no answer within/],
  ])(
    'answers %s as UpstreamUnavailableError, sent once, never retried',
    async (_name, fault, named, message) => {
      harness.simulator.setFault('verify', '/session/verify/etherscan', fault);
      const { body } = await client(harness).verify({
        address: first.address,
        chainId: first.chainId,
      });
      expect(body.errors).toBeUndefined();
      expect(body.data?.verifyContract.__typename).toBe('UpstreamUnavailableError');
      expect(body.data?.verifyContract.message).toContain(named);
      expect(body.data?.verifyContract.message).toMatch(message);
      expect(harness.simulator.requestCount(VERIFY_PATH)).toBe(1);
    },
  );

  it('leaves the chain check to the service when it has no chain list, and asks for the list again at VERIFY_CHAINS_TTL_MS 0', async () => {
    const isolated = await withoutChains();
    const unsupported = { address: first.address, chainId: '999999999' };
    for (const sent of [1, 2]) {
      const { body } = await client(isolated).verify(unsupported);
      expect(body.data?.verifyContract.__typename).toBe('VerificationRejectedError');
      expect(body.data?.verifyContract.status).toBe(400);
      expect(isolated.simulator.requestCount(VERIFY_PATH)).toBe(sent);
      // The failed fetch is not remembered: each verification asks for the list.
      expect(isolated.simulator.requestCount('/verify/chains')).toBe(sent);
    }
    // The list back: the very next verification is checked against it, nothing sent.
    isolated.simulator.verification.setChains(isolated.simulator.verification.chains);
    const { body } = await client(isolated).verify(unsupported);
    expect(body.data?.verifyContract).toMatchObject({
      __typename: 'InvalidInputError',
      field: 'chainId',
    });
    expect(isolated.simulator.requestCount(VERIFY_PATH)).toBe(2);
  });
});

describe('Query.supportedChains', () => {
  it('lists the chains the service supports', async () => {
    const harness = await withChains();
    const { body } = await harness.execute<{
      supportedChains: { id: string; name: string; supportsExplorerVerification: boolean }[];
    }>('{ supportedChains { id name supportsExplorerVerification } }');
    expect(body.errors).toBeUndefined();
    const expected = harness.simulator.verification.chains.filter(
      (chain) => chain.supported !== false,
    );
    expect(body.data?.supportedChains.map((chain) => chain.id)).toEqual(
      expected.map((chain) => String(chain.chainId)),
    );
    expect(
      body.data?.supportedChains.find((chain) => chain.id === '1')?.supportsExplorerVerification,
    ).toBe(true);
  });

  it("reads the real servers' list: 260 chains, 182 of them supported (sourcify-server 3.9.1)", async () => {
    const harness = await withChains();
    const logged = harness.logs.length;
    const chains = Array.from({ length: 260 }, (_, i) => ({
      name: `Chain ${i + 1}`,
      chainId: i + 1,
      rpc: [],
      traceSupportedRPCs: [],
      supported: i < 182,
      etherscanAPI: i % 2 === 0,
    }));
    harness.simulator.verification.setChains(chains);
    const { body } = await harness.execute<{
      supportedChains: { id: string; name: string; supportsExplorerVerification: boolean }[];
    }>('{ supportedChains { id name supportsExplorerVerification } }');
    expect(body.errors).toBeUndefined();
    expect(body.data?.supportedChains).toHaveLength(182);
    expect(body.data?.supportedChains[0]).toEqual({
      id: '1',
      name: 'Chain 1',
      supportsExplorerVerification: true,
    });
    expect(body.data?.supportedChains[1]?.supportsExplorerVerification).toBe(false);
    expect(
      harness.logs
        .slice(logged)
        .some((line) => line.msg === 'verification service chains left out'),
    ).toBe(false);
  });

  it('is empty, with an error beside it, when the service has no list', async () => {
    const harness = await withoutChains();
    const { body } = await harness.execute('{ supportedChains { id } statusPage { name } }');
    expect(body.data?.supportedChains).toEqual([]);
    expect(body.data?.statusPage).toBeTruthy();
    expect(body.errors).toHaveLength(1);
    expect(body.errors?.[0]).toMatchObject({
      path: ['supportedChains'],
      extensions: { code: 'UPSTREAM_UNAVAILABLE', upstream: 'verification service' },
    });
    expect(body.errors?.[0]?.message).toContain('GET /chains');
  });
});

describe('verificationJobChanged with the session API', () => {
  it('answers one InvalidInputError on id (the session API has no jobs), then the end', async () => {
    // A server from before APIv2: a job asked of it there would fail, not be unknown.
    const harness = await withChains();
    harness.simulator.verification.setServerVersion('session-only');
    const subscriber = await subscribeSse<{ verificationJobChanged: { __typename: string } }>(
      harness.origin,
      'subscription ($id: ID!) { verificationJobChanged(id: $id) { __typename ... on InvalidInputError { field } } }',
      { id: crypto.randomUUID() },
    );
    try {
      await subscriber.completed;
      expect(subscriber.events.map((event) => event.data?.verificationJobChanged)).toEqual([
        { __typename: 'InvalidInputError', field: 'id' },
      ]);
    } finally {
      await subscriber.close();
    }
  });
});
