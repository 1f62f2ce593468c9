import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EtherscanFailure, type Simulator, startSimulator } from '../src/server.js';
import { parseAddress, toChecksumAddress } from '../src/verification/address.js';
import { SOURCIFY_MESSAGES } from '../src/verification/errors.js';
import {
  fixtureContract,
  SOURCIFY_CHAINS,
  VERIFIABLE_CONTRACTS,
  type VerifiableContract,
} from '../src/verification/fixture.js';
import { SessionStore } from '../src/verification/sessions.js';
import type {
  SourcifyChain,
  SourcifySessionContract,
  SourcifySessionResponse,
} from '../src/verification/types.js';

const VERIFY = '/session/verify/etherscan';
const SET_COOKIE =
  /^sourcify_vid=s%3A([\w-]{32})\.[\w%]+; Path=\/; Expires=([^;]+); HttpOnly; SameSite=Lax$/;
const UNKNOWN_ADDRESS = '0x0000000000000000000000000000000000000001';

const fixture = fixtureContract;

const WETH = fixture('WETH9');
const DAI = fixture('Dai');
const USDC = fixture('FiatTokenProxy');
const GREETER = fixture('Greeter');
const TOKEN_MANAGER = fixture('TokenManager');
const COUNTER = fixture('Counter');

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

interface Answer {
  status: number;
  body: unknown;
  setCookie: string | null;
  headers: Headers;
}

async function post(
  body: unknown,
  options: { cookie?: string; path?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const response = await fetch(`${sim.verifyBaseUrl}${options.path ?? VERIFY}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(options.cookie ? { cookie: options.cookie } : {}),
      ...options.headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return answerOf(response);
}

/** An answer with its body parsed when it is JSON, as text otherwise (Express's HTML pages). */
async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  const isJson = response.headers.get('content-type')?.startsWith('application/json') ?? false;
  return {
    status: response.status,
    body: isJson && text ? JSON.parse(text) : text,
    setCookie: response.headers.get('set-cookie'),
    headers: response.headers,
  };
}

/** Express's 404 page for a request no route takes. */
function expectExpressNotFound(answer: Answer, method: string, path: string) {
  expect(answer.status).toBe(404);
  expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(answer.body).toContain(`<pre>Cannot ${method} ${path}</pre>`);
  expect(answer.setCookie).toBeNull();
}

/** A client with a cookie jar for `sourcify_vid`, like a browser (or the gateway) keeps one. */
function client() {
  let cookie: string | undefined;
  return {
    get cookie() {
      return cookie;
    },
    async verify(contract: Pick<VerifiableContract, 'address' | 'chainId'>, apiKey?: string) {
      const answer = await post(
        { address: contract.address, chainId: contract.chainId, ...(apiKey ? { apiKey } : {}) },
        cookie ? { cookie } : {},
      );
      if (answer.setCookie) cookie = answer.setCookie.split(';')[0];
      return answer;
    },
  };
}

function sessionIdOf(setCookie: string | null): string | undefined {
  return SET_COOKIE.exec(setCookie ?? '')?.[1];
}

function contractsOf(answer: Answer): SourcifySessionContract[] {
  return (answer.body as SourcifySessionResponse).contracts;
}

describe('POST /session/verify/etherscan: sessions', () => {
  it('keeps each client in its own session, and lists every contract of the session', async () => {
    const alice = client();
    const bob = client();

    const a1 = await alice.verify(WETH);
    const b1 = await bob.verify(DAI);
    const a2 = await alice.verify(USDC);

    expect([a1.status, b1.status, a2.status]).toEqual([200, 200, 200]);
    expect(contractsOf(a1).map((c) => c.address)).toEqual([WETH.address]);
    expect(contractsOf(b1).map((c) => c.address)).toEqual([DAI.address]);
    expect(contractsOf(a2).map((c) => c.address)).toEqual([WETH.address, USDC.address]);

    const aliceId = sessionIdOf(a1.setCookie);
    const bobId = sessionIdOf(b1.setCookie);
    expect(aliceId).toBeDefined();
    expect(bobId).toBeDefined();
    expect(bobId).not.toBe(aliceId);
    expect(sessionIdOf(a2.setCookie)).toBe(aliceId);

    const sessions = sim.verification.sessions();
    expect(sessions.get(aliceId ?? '')).toEqual([WETH.address, USDC.address]);
    expect(sessions.get(bobId ?? '')).toEqual([DAI.address]);

    // Bob carries on in his own session and never sees Alice's contracts.
    const b2 = await bob.verify(GREETER);
    expect(contractsOf(b2).map((c) => c.address)).toEqual([DAI.address, GREETER.address]);
  });

  it("sets express-session's rolling cookie on every answer served in a session", async () => {
    const before = Date.now();
    const first = await post({ address: WETH.address, chainId: WETH.chainId });
    const match = SET_COOKIE.exec(first.setCookie ?? '');
    expect(match, first.setCookie ?? 'no Set-Cookie').not.toBeNull();
    const expires = Date.parse(match?.[2] ?? '');
    const twelveHours = 12 * 60 * 60 * 1000;
    // HTTP dates have whole seconds.
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + twelveHours);
    expect(expires).toBeLessThanOrEqual(Date.now() + twelveHours);

    // Handler errors are served in the session too, and renew the same cookie.
    const cookie = first.setCookie?.split(';')[0] ?? '';
    const again = await post({ address: WETH.address, chainId: WETH.chainId }, { cookie });
    expect(again.status).toBe(400);
    expect(sessionIdOf(again.setCookie)).toBe(match?.[1]);
    const notVerified = await post({ address: UNKNOWN_ADDRESS, chainId: '1' }, { cookie });
    expect(notVerified.status).toBe(404);
    expect(sessionIdOf(notVerified.setCookie)).toBe(match?.[1]);
  });

  it.each([
    [
      'a bad signature',
      (id: string) => `sourcify_vid=s%3A${id}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`,
    ],
    ['an unsigned id', (id: string) => `sourcify_vid=${id}`],
    ['garbage', () => 'sourcify_vid=%%%; other=1'],
  ])('starts a new session for a cookie with %s', async (_name, cookieFor) => {
    const alice = client();
    const first = await alice.verify(WETH);
    const aliceId = sessionIdOf(first.setCookie) ?? '';

    const forged = await post(
      { address: DAI.address, chainId: DAI.chainId },
      { cookie: cookieFor(aliceId) },
    );
    expect(forged.status).toBe(200);
    expect(contractsOf(forged).map((c) => c.address)).toEqual([DAI.address]);
    expect(sessionIdOf(forged.setCookie)).not.toBe(aliceId);
    expect(sim.verification.sessions().get(aliceId)).toEqual([WETH.address]);
  });

  it('starts a new session for a well-signed cookie whose session is gone', async () => {
    const alice = client();
    await alice.verify(WETH);
    const stale = alice.cookie ?? '';
    sim.verification.reset();
    const answer = await post({ address: WETH.address, chainId: WETH.chainId }, { cookie: stale });
    expect(answer.status).toBe(200);
    expect(sessionIdOf(answer.setCookie)).not.toBe(sessionIdOf(stale));

    // A cookie from another simulator is not ours either.
    const other = await startSimulator({ sourcify: null });
    try {
      const foreign = await fetch(`${other.verifyBaseUrl}${VERIFY}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          cookie: answer.setCookie?.split(';')[0] ?? '',
        },
        body: JSON.stringify({ address: WETH.address, chainId: WETH.chainId }),
      });
      expect(sessionIdOf(foreign.headers.get('set-cookie'))).not.toBe(
        sessionIdOf(answer.setCookie),
      );
    } finally {
      await other.close();
    }
  });

  it("answers 400 when the contract is already in the session (it didn't add any new file)", async () => {
    const alice = client();
    await alice.verify(WETH);
    const again = await alice.verify(WETH);
    expect(again.status).toBe(400);
    expect(again.body).toEqual({
      error: SOURCIFY_MESSAGES.noNewFile,
      message: SOURCIFY_MESSAGES.noNewFile,
    });
    // The same address in lower case is the same contract.
    const lower = await alice.verify({ address: WETH.address.toLowerCase(), chainId: '1' });
    expect(lower.status).toBe(400);
    expect(sim.verification.sessions().get(sessionIdOf(again.setCookie) ?? '')).toEqual([
      WETH.address,
    ]);
  });
});

describe('POST /session/verify/etherscan: the session payload', () => {
  it('answers getSessionJSON with realistic, varied contracts', async () => {
    const alice = client();
    for (const contract of [WETH, DAI, USDC, GREETER, TOKEN_MANAGER]) {
      expect((await alice.verify(contract)).status).toBe(200);
    }
    const last = await alice.verify(COUNTER);
    expect(last.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = last.body as SourcifySessionResponse;
    expect(Object.keys(body)).toEqual(['contracts', 'unused', 'files']);
    expect(body.unused).toEqual([]);
    expect(body.files).toContain('metadata.json');
    expect(body.files).toContain('contracts/Greeter.sol');

    const byName = new Map(body.contracts.map((contract) => [contract.name, contract]));
    expect([...byName.keys()]).toEqual([
      'WETH9',
      'Dai',
      'FiatTokenProxy',
      'Greeter',
      'TokenManager',
      'Counter',
    ]);
    for (const contract of body.contracts) {
      expect(contract.verificationId).toMatch(/^[0-9a-f]{40}$/);
      expect(typeof contract.chainId).toBe('string');
      expect(parseAddress(contract.address ?? '')).toBe(contract.address);
      expect(Array.isArray(contract.files.found)).toBe(true);
      expect(contract.files.missing).toBeTypeOf('object');
      expect(Array.isArray(contract.files.missing)).toBe(false);
      expect(contract.files.invalid).toEqual({});
    }

    // Sourcify 3.9.1 never sends compilerVersion.
    for (const contract of body.contracts) expect(contract).not.toHaveProperty('compilerVersion');
    // Already in storage before: the stored match, with its timestamp and no message.
    expect(byName.get('WETH9')).toMatchObject({
      status: 'perfect',
      storageTimestamp: '2021-09-23T13:22:17.214Z',
      files: { found: ['WETH9.sol'], missing: {}, invalid: {} },
    });
    expect(byName.get('WETH9')).not.toHaveProperty('statusMessage');
    // A partial match.
    const usdc = byName.get('FiatTokenProxy');
    expect(usdc?.status).toBe('partial');
    expect(usdc?.constructorArgumentsArray).toEqual([
      { internalType: 'address', name: 'implementationContract', type: 'address' },
    ]);
    // Missing sources: an object keyed by path, and no match.
    const tokenManager = byName.get('TokenManager');
    expect(tokenManager?.status).toBe('error');
    expect(Object.keys(tokenManager?.files.missing ?? {})).toEqual([
      '@openzeppelin/contracts/access/Ownable.sol',
    ]);
    expect(tokenManager?.files.missing['@openzeppelin/contracts/access/Ownable.sol']).toMatchObject(
      {
        keccak256: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        urls: expect.arrayContaining([expect.stringMatching(/^dweb:\/ipfs\//)]),
      },
    );
    expect(tokenManager).not.toHaveProperty('storageTimestamp');
    // A failed verification explains itself.
    expect(byName.get('Counter')).toMatchObject({
      status: 'error',
      statusMessage: "The deployed and recompiled bytecode don't match.",
      chainId: '296',
    });
    expect(byName.get('Counter')).not.toHaveProperty('storageTimestamp');
    // Verified by an earlier answer of the session: stored now, without a message.
    expect(byName.get('Greeter')).toMatchObject({
      status: 'perfect',
      storageTimestamp: expect.any(String),
    });
    expect(byName.get('Greeter')).not.toHaveProperty('statusMessage');
  });

  it('shows a new match without storageTimestamp first, then with it, in any session', async () => {
    const alice = client();
    const first = await alice.verify(USDC);
    const [fresh] = contractsOf(first);
    expect(fresh?.status).toBe('partial');
    expect(fresh?.statusMessage).toBe('');
    expect(fresh).not.toHaveProperty('storageTimestamp');

    const second = await alice.verify(DAI);
    const [stored, dai] = contractsOf(second);
    expect(stored?.status).toBe('partial');
    expect(Date.parse(stored?.storageTimestamp ?? '')).not.toBeNaN();
    expect(stored).not.toHaveProperty('statusMessage');
    expect(dai).not.toHaveProperty('storageTimestamp');

    const bob = await client().verify(USDC);
    expect(contractsOf(bob)[0]?.storageTimestamp).toBe(stored?.storageTimestamp);

    sim.verification.reset();
    const afterReset = await client().verify(USDC);
    expect(contractsOf(afterReset)[0]).not.toHaveProperty('storageTimestamp');
  });

  it('accepts the address in any valid form and answers it checksummed', async () => {
    const lower = await post({ address: DAI.address.toLowerCase(), chainId: '1' });
    expect(contractsOf(lower)[0]?.address).toBe(DAI.address);
    const noPrefix = await post({ address: DAI.address.slice(2).toUpperCase(), chainId: '1' });
    expect(contractsOf(noPrefix)[0]?.address).toBe(DAI.address);
  });

  it("accepts Sourcify's own `chain` field, and a trailing slash", async () => {
    const answer = await post({ address: GREETER.address, chain: '296' });
    expect(answer.status).toBe(200);
    expect(contractsOf(answer)[0]).toMatchObject({ chainId: '296', name: 'Greeter' });
    const slash = await post({ address: DAI.address, chainId: '1' }, { path: `${VERIFY}/` });
    expect(slash.status).toBe(200);
  });

  it('knows a contract only on its own chain', async () => {
    const answer = await post({ address: GREETER.address, chainId: '1' });
    expect(answer.status).toBe(404);
  });
});

describe('POST /session/verify/etherscan: refusals', () => {
  it.each([
    ['malformed JSON', '{"address":', /JSON/],
    ['JSON null', 'null', /Unexpected token 'n', "null" is not valid JSON/],
    ['a JSON string', '"0xC02a"', /not valid JSON/],
    ['only whitespace', '  \n', /Unexpected end of JSON input/],
  ])('answers %s with 400 { error, message } and no session', async (_name, body, message) => {
    const answer = await post(body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: expect.stringMatching(message),
      message: expect.stringMatching(message),
    });
    expect(answer.setCookie).toBeNull();
  });

  it.each([
    [
      'an array',
      [],
      'request/body must be object',
      [{ path: '/body', message: 'must be object', errorCode: 'type.openapi.validation' }],
    ],
    [
      // Two problems; the real server reports the first only.
      'an empty object',
      {},
      "request/body must have required property 'address'",
      [
        {
          path: '/body/address',
          message: "must have required property 'address'",
          errorCode: 'required.openapi.validation',
        },
      ],
    ],
    [
      'a numeric address and a missing chainId',
      { address: 1 },
      'request/body/address must be string',
      [{ path: '/body/address', message: 'must be string', errorCode: 'type.openapi.validation' }],
    ],
    [
      'a numeric chainId',
      { address: WETH.address, chainId: 1 },
      'request/body/chainId must be string',
      [{ path: '/body/chainId', message: 'must be string', errorCode: 'type.openapi.validation' }],
    ],
    [
      'a numeric apiKey',
      { address: WETH.address, chainId: '1', apiKey: 42 },
      'request/body/apiKey must be string',
      [{ path: '/body/apiKey', message: 'must be string', errorCode: 'type.openapi.validation' }],
    ],
    [
      'an address that is an object',
      { address: { __proto__: null, x: 1 }, chain: '1' },
      'request/body/address must be string',
      [{ path: '/body/address', message: 'must be string', errorCode: 'type.openapi.validation' }],
    ],
  ])(
    "answers %s with the validator's 400 { message, errors } and no session",
    async (_name, body, message, errors) => {
      const answer = await post(body);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ message, errors });
      expect(answer.setCookie).toBeNull();
    },
  );

  it.each([
    [
      'a bad checksum',
      `0x${'aB'.repeat(20)}`,
      '1',
      SOURCIFY_MESSAGES.invalidAddress(`0x${'aB'.repeat(20)}`),
    ],
    ['a short address', '0x1234', '1', SOURCIFY_MESSAGES.invalidAddress('0x1234')],
    [
      'an unknown chain',
      WETH.address,
      '999999999',
      SOURCIFY_MESSAGES.chainNotSupported('999999999'),
    ],
    ['an unsupported chain', WETH.address, '5', SOURCIFY_MESSAGES.chainNotSupported('5')],
    ['a chain name', WETH.address, 'mainnet', SOURCIFY_MESSAGES.chainNotSupported('mainnet')],
  ])(
    "answers %s with 400 and Sourcify's message, before any session",
    async (_name, address, chainId, message) => {
      const answer = await post({ address, chainId });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: message, message });
      expect(answer.setCookie).toBeNull();
    },
  );

  it('answers a supported chain without Etherscan import with 400, in a session', async () => {
    const answer = await post({ address: WETH.address, chainId: '295' });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: 'Requested chain 295 is not supported for importing from Etherscan.',
      message: 'Requested chain 295 is not supported for importing from Etherscan.',
    });
    expect(answer.setCookie).toMatch(SET_COOKIE);
  });

  it('answers an address the explorer has not verified with 404, in a session', async () => {
    const answer = await post({ address: UNKNOWN_ADDRESS, chainId: '11155111' });
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      error: 'This contract is not verified on Etherscan.',
      message: 'This contract is not verified on Etherscan.',
    });
    expect(answer.setCookie).toMatch(SET_COOKIE);
  });

  it("answers another explorer with Express's 404 page, without a session", async () => {
    const answer = await post(
      { address: WETH.address, chainId: '1' },
      { path: '/session/verify/blockscout' },
    );
    expectExpressNotFound(answer, 'POST', '/session/verify/blockscout');
    expect(sim.verification.received.at(-1)).toMatchObject({
      explorer: 'blockscout',
      address: WETH.address,
      status: 404,
    });
  });

  it("answers a body that is not JSON with 415, and other methods with Express's 404 page", async () => {
    const text = await post(JSON.stringify({ address: WETH.address, chainId: '1' }), {
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
    });
    expect(text.status).toBe(415);
    expect(text.body).toMatchObject({ message: 'unsupported media type text/plain' });

    const get = await answerOf(await fetch(`${sim.verifyBaseUrl}${VERIFY}`));
    expectExpressNotFound(get, 'GET', VERIFY);
    expect(get.headers.get('deprecation')).toBe('true');
  });

  it('never crashes on malformed requests', async () => {
    const bodies: Array<string | Blob> = [
      new Blob([new Uint8Array([0xff, 0xfe, 0x00, 0x7b, 0xc3, 0x28])]),
      '{'.repeat(100_000),
      `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
      '{"address":"0x","chainId":"1","__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"x":1}},"address":"x","chainId":"1"}',
      `{"address":"${'a'.repeat(1_000_000)}","chainId":"1"}`,
      '{"address":null,"chainId":null,"apiKey":null}',
    ];
    for (const body of bodies) {
      const response = await fetch(`${sim.verifyBaseUrl}${VERIFY}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(response.status, String(body).slice(0, 40)).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      await response.text();
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();

    // A request cut off mid-body.
    await new Promise<void>((resolve) => {
      const url = new URL(sim.verifyBaseUrl);
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.end(
          `POST /verify${VERIFY} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
            'Content-Length: 1000\r\n\r\n{"address":',
        );
      });
      socket.on('close', () => resolve());
      socket.on('error', () => resolve());
      socket.resume();
    });

    expect((await client().verify(WETH)).status).toBe(200);
  });
});

describe('GET /chains', () => {
  it('lists the chains with their flags', async () => {
    const response = await fetch(`${sim.verifyBaseUrl}/chains`);
    expect(response.status).toBe(200);
    // Not a session route: no cookie, not deprecated.
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(response.headers.get('deprecation')).toBeNull();
    const chains = (await response.json()) as SourcifyChain[];
    const byId = new Map(chains.map((chain) => [chain.chainId, chain]));
    // The real servers' shape, field for field.
    for (const chain of chains) {
      expect(Object.keys(chain)).toEqual([
        'name',
        'chainId',
        'rpc',
        'traceSupportedRPCs',
        'supported',
        'etherscanAPI',
      ]);
      expect(chain).toEqual({
        name: expect.any(String),
        chainId: expect.any(Number),
        rpc: [],
        traceSupportedRPCs: [],
        supported: expect.any(Boolean),
        etherscanAPI: expect.any(Boolean),
      });
    }
    expect(byId.get(5)).toMatchObject({ supported: false, etherscanAPI: false });
    expect(byId.get(1)).toMatchObject({
      name: 'Ethereum Mainnet',
      supported: true,
      etherscanAPI: true,
    });
    expect(byId.get(11155111)).toMatchObject({ name: 'Sepolia', supported: true });
    expect(byId.get(295)).toMatchObject({
      name: 'Hedera Mainnet',
      supported: true,
      etherscanAPI: false,
    });
    expect(byId.get(296)).toMatchObject({ name: 'Hedera Testnet', supported: true });
    expect(byId.get(297)).toMatchObject({
      name: 'Hedera Previewnet',
      supported: true,
      etherscanAPI: false,
    });
    expect(chains.some((chain) => !chain.supported)).toBe(true);
    expect(sim.verification.chains).toEqual(chains);
  });

  it('serves a replaced list, and verification follows it', async () => {
    const chains = SOURCIFY_CHAINS.map((chain) =>
      chain.chainId === 296 ? { ...chain, supported: false } : chain,
    );
    sim.verification.setChains(chains);
    const served = (await (await fetch(`${sim.verifyBaseUrl}/chains`)).json()) as SourcifyChain[];
    expect(served.find((chain) => chain.chainId === 296)?.supported).toBe(false);
    const refused = await post({ address: GREETER.address, chainId: '296' });
    expect(refused.body).toMatchObject({ error: 'Chain 296 not supported for verification!' });

    // An older server's form: the explorer's API URL instead of a boolean.
    sim.verification.setChains([
      {
        name: 'Ethereum Mainnet',
        chainId: 1,
        rpc: [],
        supported: true,
        etherscanAPI: 'https://api.etherscan.io',
      },
    ]);
    expect((await post({ address: DAI.address, chainId: '1' })).status).toBe(200);
  });

  it('answers 404 after setChains(null), while verification keeps the last list', async () => {
    sim.verification.setChains(null);
    expectExpressNotFound(
      await answerOf(await fetch(`${sim.verifyBaseUrl}/chains`)),
      'GET',
      '/chains',
    );
    expect((await post({ address: WETH.address, chainId: '1' })).status).toBe(200);
    expect((await post({ address: WETH.address, chainId: '999' })).status).toBe(400);

    sim.verification.reset();
    expect((await fetch(`${sim.verifyBaseUrl}/chains`)).status).toBe(200);
  });

  it('rejects a bad chain list, changing nothing', () => {
    expect(() => sim.verification.setChains([{ name: 'x' } as unknown as SourcifyChain])).toThrow(
      TypeError,
    );
    const duplicate = [SOURCIFY_CHAINS[0], SOURCIFY_CHAINS[0]] as SourcifyChain[];
    expect(() => sim.verification.setChains(duplicate)).toThrow(/twice/);
    expect(sim.verification.chains).toEqual(SOURCIFY_CHAINS);
  });
});

describe('routes, cookies and headers', () => {
  it("answers a path without a route with Express's HTML page, not JSON", async () => {
    const answer = await answerOf(await fetch(`${sim.verifyBaseUrl}/x`));
    expectExpressNotFound(answer, 'GET', '/x');
    expect(answer.body).toBe(
      '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot GET /x</pre>\n</body>\n</html>\n',
    );
    expect(answer.headers.get('content-security-policy')).toBe("default-src 'none'");
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('deprecation')).toBeNull();
    expectExpressNotFound(
      await answerOf(await fetch(`${sim.verifyBaseUrl}/v2/nothing`, { method: 'DELETE' })),
      'DELETE',
      '/v2/nothing',
    );
  });

  it('sets sourcify_vid on the session route only, and marks every /session answer deprecated', async () => {
    const served = await post({ address: WETH.address, chainId: WETH.chainId });
    expect(served.setCookie).toMatch(SET_COOKIE);
    expect(served.headers.get('deprecation')).toBe('true');
    const refused = await post({ address: '0x12', chainId: '1' });
    expect(refused.status).toBe(400);
    expect(refused.setCookie).toBeNull();
    expect(refused.headers.get('deprecation')).toBe('true');

    const elsewhere = [
      await fetch(`${sim.verifyBaseUrl}/chains`),
      await fetch(`${sim.verifyBaseUrl}/nothing`),
      await fetch(`${sim.verifyBaseUrl}/v2/contract/1/${WETH.address}`),
    ];
    for (const response of elsewhere) {
      expect(response.headers.get('set-cookie'), response.url).toBeNull();
      expect(response.headers.get('deprecation'), response.url).toBeNull();
    }
  });
});

describe('Etherscan failing behind the session API', () => {
  it.each([
    ['unreachable', 502, 'Network error while connecting to Etherscan API.'],
    ['http-error', 502, 'Etherscan API returned HTTP 503 error.'],
    ['invalid-api-key', 502, 'Error in Etherscan API response. Result message: Invalid API Key'],
    ['rate-limit', 429, 'Etherscan API rate limit reached, try later.'],
  ] as const)(
    "%s: %i with Sourcify's { error, message }, in the session, without Retry-After",
    async (failure, status, message) => {
      sim.verification.setEtherscanFailure(failure, { times: 1 });
      const failed = await post({ address: DAI.address, chainId: DAI.chainId, apiKey: 'K' });
      expect(failed.status).toBe(status);
      expect(failed.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(failed.body).toEqual({ error: message, message });
      expect(failed.headers.get('retry-after')).toBeNull();
      expect(failed.setCookie).toMatch(SET_COOKIE);
      expect(sim.verification.received.at(-1)).toMatchObject({ apiKey: 'K', status });
      // Used up: the next fetch answers.
      expect(sim.verification.etherscanFailure).toBeNull();
      expect((await post({ address: DAI.address, chainId: DAI.chainId })).status).toBe(200);
    },
  );

  it('fails before Etherscan could say the contract is not verified, until cleared', async () => {
    sim.verification.setEtherscanFailure('unreachable');
    expect((await post({ address: UNKNOWN_ADDRESS, chainId: '1' })).status).toBe(502);
    expect((await post({ address: WETH.address, chainId: '1' })).status).toBe(502);
    expect(sim.verification.etherscanFailure).toEqual({ failure: 'unreachable', remaining: null });
    // Sourcify's own checks come first: no fetch for a chain without Etherscan import.
    expect((await post({ address: WETH.address, chainId: '295' })).status).toBe(400);
    sim.verification.setEtherscanFailure(null);
    expect((await post({ address: WETH.address, chainId: '1' })).status).toBe(200);
  });

  it('is set and cleared through the control API, checked first', async () => {
    const control = (body: unknown) =>
      fetch(`${sim.origin}/_simulator/verification`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const set = await control({ etherscan: { failure: 'invalid-api-key', times: 2 } });
    expect(await set.json()).toMatchObject({
      etherscan: { failure: 'invalid-api-key', remaining: 2 },
    });
    expect((await post({ address: DAI.address, chainId: '1' })).body).toMatchObject({
      error: 'Error in Etherscan API response. Result message: Invalid API Key',
    });
    for (const bad of [
      { etherscan: { failure: 'down' } },
      { etherscan: { failure: 'unreachable', times: 0 } },
      { etherscan: 'unreachable' },
      { etherscan: { failure: 'unreachable', when: 'now' } },
    ]) {
      const response = await control(bad);
      expect(response.status, JSON.stringify(bad)).toBe(400);
    }
    expect(sim.verification.etherscanFailure).toEqual({
      failure: 'invalid-api-key',
      remaining: 1,
    });
    expect(await (await control({ etherscan: null })).json()).toMatchObject({ etherscan: null });
    expect(() =>
      sim.verification.setEtherscanFailure('down' as unknown as EtherscanFailure),
    ).toThrow(TypeError);
  });
});

describe('server versions', () => {
  it("3.12.1 has no session API: its routes answer Express's 404 page", async () => {
    sim.verification.setServerVersion('3.12.1');
    const answer = await post({ address: WETH.address, chainId: WETH.chainId, apiKey: 'K' });
    expectExpressNotFound(answer, 'POST', VERIFY);
    expect(answer.headers.get('deprecation')).toBeNull();
    expect(sim.verification.received.at(-1)).toMatchObject({
      apiKey: 'K',
      sessionId: null,
      status: 404,
    });
    expect(sim.verification.sessions().size).toBe(0);
    // The chain list and APIv2 are there.
    expect((await fetch(`${sim.verifyBaseUrl}/chains`)).status).toBe(200);
    expect((await fetch(`${sim.verifyBaseUrl}/v2/contract/1/${WETH.address}`)).status).toBe(200);
  });

  it('3.9.1, and the default, serve the session API; reset goes back to the default', async () => {
    expect(sim.verification.serverVersion).toBeNull();
    sim.verification.setServerVersion('3.9.1');
    expect((await post({ address: WETH.address, chainId: WETH.chainId })).status).toBe(200);
    sim.verification.reset();
    expect(sim.verification.serverVersion).toBeNull();
    expect(() => sim.verification.setServerVersion('3.10' as '3.9.1')).toThrow(TypeError);
  });

  it('is chosen through the control API', async () => {
    const control = (body: unknown) =>
      fetch(`${sim.origin}/_simulator/verification`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect(await (await control({ serverVersion: '3.12.1' })).json()).toMatchObject({
      serverVersion: '3.12.1',
    });
    expect((await post({ address: WETH.address, chainId: '1' })).status).toBe(404);
    expect((await control({ serverVersion: '2' })).status).toBe(400);
    expect(await (await control({ serverVersion: null })).json()).toMatchObject({
      serverVersion: null,
    });
    expect((await post({ address: WETH.address, chainId: '1' })).status).toBe(200);
  });
});

describe('the fake explorer', () => {
  it('holds EIP-55 checksummed addresses on chains 1 and 296', () => {
    expect(new Set(VERIFIABLE_CONTRACTS.map((contract) => contract.chainId))).toEqual(
      new Set(['1', '296']),
    );
    for (const contract of VERIFIABLE_CONTRACTS) {
      expect(toChecksumAddress(contract.address.toLowerCase())).toBe(contract.address);
    }
    // The EIP-55 specification's own examples.
    for (const address of [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    ]) {
      expect(toChecksumAddress(address.toLowerCase())).toBe(address);
      expect(parseAddress(address.toUpperCase().replace('0X', '0x'))).toBe(address);
    }
    expect(parseAddress('0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).toBeNull();
  });

  it('learns new contracts, and replaces known ones', async () => {
    const added: VerifiableContract = {
      chainId: '11155111',
      address: '0x1c7d4b196cb0c7b01d743fbc6116a902379c7238',
      name: 'FiatTokenV2_2',
      compiledPath: 'contracts/v2/FiatTokenV2_2.sol',
      compilerVersion: '0.6.12+commit.27d51765',
      sources: ['contracts/v2/FiatTokenV2_2.sol'],
      status: 'perfect',
    };
    sim.verification.addContract(added);
    const answer = await post({ address: added.address, chainId: added.chainId });
    expect(answer.status).toBe(200);
    expect(contractsOf(answer)[0]?.address).toBe('0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238');

    sim.verification.addContract({ ...DAI, status: 'extra-file-input-bug' });
    expect(contractsOf(await post({ address: DAI.address, chainId: '1' }))[0]?.status).toBe(
      'extra-file-input-bug',
    );
    expect(() => sim.verification.addContract({ ...DAI, address: '0x1234' })).toThrow(TypeError);
    expect(() => sim.verification.addContract({ ...DAI, chainId: 'one' })).toThrow(TypeError);
  });

  it('refuses a second deployment of the same compilation in one session, as Sourcify does', async () => {
    const twin: VerifiableContract = { ...GREETER, chainId: '1', address: UNKNOWN_ADDRESS };
    sim.verification.addContract(twin);
    const alice = client();
    expect((await alice.verify(GREETER)).status).toBe(200);
    expect((await alice.verify(twin)).body).toMatchObject({ error: SOURCIFY_MESSAGES.noNewFile });
    expect((await client().verify(twin)).status).toBe(200);
  });
});

describe('faults on the verification upstream', () => {
  it('status: 429 with retry-after and a Sourcify body, without a session', async () => {
    const body = JSON.stringify({ error: SOURCIFY_MESSAGES.etherscanRateLimited });
    sim.setFault('verify', VERIFY, {
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '30' },
      body,
    });
    const limited = await post({ address: WETH.address, chainId: '1' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('30');
    expect(limited.body).toEqual({ error: 'Etherscan API rate limit reached, try later.' });
    expect(limited.setCookie).toBeNull();
    // The fault answered in front of the upstream: nothing reached it.
    expect(sim.verification.received).toEqual([]);
  });

  it("status: 503, on every path with '*' (the chain list too)", async () => {
    sim.setFault('verify', '*', { kind: 'status', status: 503 });
    expect((await post({ address: WETH.address, chainId: '1' })).status).toBe(503);
    const chains = await fetch(`${sim.verifyBaseUrl}/chains`);
    expect(chains.status).toBe(503);
    expect(await chains.json()).toEqual({ error: 'Simulated 503 Service Unavailable' });
  });

  it('hang: never answers', async () => {
    sim.setFault('verify', VERIFY, { kind: 'hang' });
    await expect(
      fetch(`${sim.verifyBaseUrl}${VERIFY}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ address: WETH.address, chainId: '1' }),
        signal: AbortSignal.timeout(300),
      }),
    ).rejects.toThrow();
  });

  it('delay: answers normally, in the session, after the delay', async () => {
    sim.setFault('verify', VERIFY, { kind: 'delay', ms: 200 });
    const started = performance.now();
    const answer = await post({ address: WETH.address, chainId: '1', apiKey: 'SLOW' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(answer.status).toBe(200);
    expect(answer.setCookie).toMatch(SET_COOKIE);
    expect(sim.verification.received.map((entry) => entry.apiKey)).toEqual(['SLOW']);
  });

  it('times: the next request reaches the upstream again', async () => {
    sim.setFault('verify', VERIFY, { kind: 'status', status: 502 }, { times: 1 });
    expect((await post({ address: WETH.address, chainId: '1' })).status).toBe(502);
    expect((await post({ address: WETH.address, chainId: '1' })).status).toBe(200);
  });
});

describe('verification.received', () => {
  it('records every request with its body as sent, apiKey included', async () => {
    const alice = client();
    await alice.verify(WETH, 'MY-ETHERSCAN-KEY');
    await alice.verify({ address: DAI.address.toLowerCase(), chainId: '1' });
    await post({ address: WETH.address, chainId: 296 });

    const [first, second, third] = sim.verification.received;
    expect(first).toEqual({
      explorer: 'etherscan',
      address: WETH.address,
      chainId: '1',
      apiKey: 'MY-ETHERSCAN-KEY',
      sessionId: expect.stringMatching(/^[\w-]{32}$/),
      cookie: undefined,
      status: 200,
    });
    expect(second).toMatchObject({
      address: DAI.address.toLowerCase(),
      apiKey: undefined,
      sessionId: first?.sessionId,
      cookie: alice.cookie,
      status: 200,
    });
    // Refused by the validator: no session; non-string fields as their JSON text.
    expect(third).toMatchObject({ chainId: '296', sessionId: null, status: 400 });
  });

  it('is bounded like the request log', async () => {
    const small = await startSimulator({ requestLogCapacity: 2, sourcify: null });
    try {
      for (const apiKey of ['a', 'b', 'c']) {
        await fetch(`${small.verifyBaseUrl}${VERIFY}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ address: UNKNOWN_ADDRESS, chainId: '1', apiKey }),
        });
      }
      expect(small.verification.received.map((entry) => entry.apiKey)).toEqual(['b', 'c']);
    } finally {
      await small.close();
    }
  });
});

describe('control API: /_simulator/verification', () => {
  const control = (method: string, body?: unknown) =>
    fetch(`${sim.origin}/_simulator/verification`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
    });

  it('reports sessions and counts without API keys, and resets', async () => {
    const alice = client();
    await alice.verify(WETH, 'SECRET-KEY');
    const overview = await control('GET');
    expect(overview.status).toBe(200);
    const text = await overview.text();
    expect(text).not.toContain('SECRET-KEY');
    const id = sessionIdOf(`${alice.cookie}; Path=/; Expires=x; HttpOnly; SameSite=Lax`) ?? '';
    expect(JSON.parse(text)).toEqual({
      sessions: { [id]: [WETH.address] },
      received: 1,
      contracts: VERIFIABLE_CONTRACTS.length,
      chains: SOURCIFY_CHAINS.length,
      serverVersion: null,
      etherscan: null,
    });

    const reset = await control('DELETE');
    expect(await reset.json()).toMatchObject({ sessions: {}, received: 0 });
    expect(sim.verification.sessions().size).toBe(0);
  });

  it('replaces the chain list and adds contracts, checking everything first', async () => {
    const hidden = await control('PUT', { chains: null });
    expect(await hidden.json()).toMatchObject({ chains: null });
    expect((await fetch(`${sim.verifyBaseUrl}/chains`)).status).toBe(404);

    const contract = { ...DAI, chainId: '11155111' };
    const added = await control('PUT', { chains: SOURCIFY_CHAINS, contracts: [contract] });
    expect(await added.json()).toMatchObject({
      chains: SOURCIFY_CHAINS.length,
      contracts: VERIFIABLE_CONTRACTS.length + 1,
    });
    expect((await post({ address: DAI.address, chainId: '11155111' })).status).toBe(200);

    for (const bad of [
      {},
      { chains: 'all' },
      { contracts: [{ ...DAI, status: 'great' }] },
      { contracts: {} },
      { chains: SOURCIFY_CHAINS, contracts: [{ ...DAI, address: 'nope' }] },
      { sessions: {} },
    ]) {
      const response = await control('PUT', bad);
      expect(response.status, JSON.stringify(bad)).toBe(400);
      expect(await response.json()).toMatchObject({ error: expect.any(String) });
    }
    expect((await control('PATCH', {})).status).toBe(405);
  });
});

describe('SessionStore', () => {
  it('expires a session 12 hours after its last use, and renews it on every use', () => {
    let now = 0;
    const store = new SessionStore({ now: () => now });
    const session = store.open(undefined);
    const cookie = store.touch(session).split(';')[0];
    now += 11 * 60 * 60 * 1000;
    expect(store.open(cookie).id).toBe(session.id);
    store.touch(session);
    now += 11 * 60 * 60 * 1000;
    expect(store.open(cookie).id).toBe(session.id);
    now += 12 * 60 * 60 * 1000;
    expect(store.open(cookie).id).not.toBe(session.id);
    expect(store.snapshot().has(session.id)).toBe(false);
  });

  it('drops the least recently used sessions past its capacity', () => {
    const store = new SessionStore({ capacity: 2 });
    const [a, b] = [store.open(undefined), store.open(undefined)];
    store.touch(a);
    const c = store.open(undefined);
    expect([...store.snapshot().keys()]).toEqual([a.id, c.id]);
    expect(store.snapshot().has(b.id)).toBe(false);
  });
});
