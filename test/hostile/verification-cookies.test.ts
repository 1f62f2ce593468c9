import type { Server } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { eventually } from '../helpers/eventually.js';
import { extraListeners } from '../helpers/extra-listeners.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { sessionEra } from '../helpers/session-era.js';
import { parseSse } from '../helpers/subscriptions.js';

const contract = VERIFIABLE_CONTRACTS.find((candidate) => candidate.name === 'Greeter');
const body = JSON.stringify({
  query: `mutation ($input: VerifyContractInput!) { verifyContract(input: $input) { __typename } }`,
  variables: { input: { address: contract?.address, chainId: contract?.chainId } },
});

/**
 * The one gateway, on the session API, whose verifications may wait at the service up to 10 s
 * (the upstream timeout): each test sets its own fault on the service, put back after it, and its
 * clients come without a cookie.
 */
let shared: Harness;
const listeners = extraListeners();
beforeAll(async () => {
  shared = await startHarness(
    sessionEra({ env: { UPSTREAM_TIMEOUT_MS: 10_000 }, logLevel: 'warn' }),
  );
});
beforeEach(() => {
  shared.simulator.clearFaults();
  shared.simulator.verification.reset();
  shared.simulator.resetRequests();
});
afterEach(() => listeners.close());
afterAll(() => shared.close());

describe('odd session cookies from the verification service', () => {
  it('keeps a quoted cookie value and caps an absurd Max-Age', async () => {
    const harness = shared;
    harness.simulator.setFault(
      'verify',
      '/session/verify/etherscan',
      {
        kind: 'status',
        status: 400,
        body: JSON.stringify({ error: 'Try again.' }),
        headers: { 'set-cookie': 'sourcify_vid="abc123"; Max-Age=1e23; Path=/; HttpOnly' },
      },
      { times: 1 },
    );
    const first = await harness.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const setCookie = first.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^verify_session=[\w-]+;/);
    const maxAge = Number(/Max-Age=(\d+)/i.exec(setCookie)?.[1]);
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThanOrEqual(400 * 24 * 60 * 60);
    expect(setCookie).not.toMatch(/e\+?23/i);

    // The next call carries the quoted value back upstream, as the service set it.
    const cookie = setCookie.split(';')[0] ?? '';
    const second = await harness.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body,
    });
    expect(second.status).toBe(200);
    expect(harness.simulator.verification.received.at(-1)?.cookie).toContain(
      'sourcify_vid="abc123"',
    );
  });
});

/**
 * The gateway on the session API, whose next verification waits a second at the service (within
 * the upstream timeout), so that a test can act while it runs.
 */
async function holding(): Promise<Harness> {
  const harness = shared;
  const held = { kind: 'delay', ms: 1_000 } as const;
  harness.simulator.setFault('verify', '/session/verify/etherscan', held, { times: 1 });
  return harness;
}

/** The verification as a single-result event stream, as an SSE client sends it to `origin`. */
const verifyOverSse = (origin: string, init: RequestInit = {}) =>
  fetch(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body,
    ...init,
  });

/** The `verify_session` cookie an answer sets, as a client sends it back (`name=value`). */
function sessionCookieOf(response: Response): string | undefined {
  const cookies = response.headers.getSetCookie();
  expect(cookies).toHaveLength(1);
  return cookies[0]?.match(/^verify_session=[\w-]+/)?.[0];
}

/**
 * The upstream session a client's cookie carries: the one its next verification (sent to
 * `origin`, a listener of the harness's gateway) is served in.
 */
async function sessionOf(harness: Harness, cookie: string | undefined, origin = harness.origin) {
  const { status } = await fetch(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: cookie ?? '' },
    body,
  });
  expect(status).toBe(200);
  return harness.simulator.verification.received.at(-1)?.sessionId;
}

/** The session verification requests in flight at the service (a delay fault holds them there). */
const verifying = (harness: Harness) =>
  harness.simulator.concurrency('/verify/session/verify/').current;

const connectionsOf = (server: Server) =>
  new Promise<number>((resolve, reject) =>
    server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );

describe('the session cookie of a verification over SSE', () => {
  it("is on each client's own answer: two clients sending the same mutation at once each get theirs", async () => {
    const harness = await holding();
    // The second arrives while the first runs: the same request bytes, no cookie, one SSE channel.
    const first = verifyOverSse(harness.origin);
    await eventually(() => verifying(harness) === 1);
    const second = verifyOverSse(harness.origin);
    const answers = await Promise.all([first, second]);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      const events = parseSse(await answer.text()).filter(({ event }) => event);
      expect(events).toEqual([
        {
          event: 'next',
          data: expect.stringContaining('"verifyContract":{"__typename":"VerificationResult"}'),
        },
        { event: 'complete', data: '' },
      ]);
    }
    const [cookieA, cookieB] = answers.map(sessionCookieOf);
    expect(cookieA).toBeDefined();
    expect(cookieB).toBeDefined();
    // Each request ran in a session of its own (the first's, held, came in first), and each
    // client's cookie carries its own.
    const served = harness.simulator.verification.received.map((entry) => entry.sessionId);
    expect(served).toHaveLength(2);
    expect(new Set(served).size).toBe(2);
    expect([await sessionOf(harness, cookieA), await sessionOf(harness, cookieB)]).toEqual(served);
  });

  it('is never handed to another client: when the client that ran it leaves, the next runs its own', async () => {
    const harness = await holding();
    // A listener of this test's own: none of the file's earlier connections to count.
    const { server, origin } = await listeners.listen(harness);
    const gone = new AbortController();
    const first = verifyOverSse(origin, { signal: gone.signal }).catch(() => undefined);
    await eventually(() => verifying(harness) === 1);
    gone.abort();
    await first;
    await eventually(async () => (await connectionsOf(server)) === 0);
    // Joins the verification still running for the client that left.
    const second = await verifyOverSse(origin);
    expect(second.status).toBe(200);
    expect(await second.text()).toContain('"verifyContract":{"__typename":"VerificationResult"}');
    const cookie = sessionCookieOf(second);
    expect(cookie).toBeDefined();

    const [left, own] = harness.simulator.verification.received.map((entry) => entry.sessionId);
    expect(left).toBeDefined();
    expect(own).toBeDefined();
    expect(own).not.toBe(left);
    expect(await sessionOf(harness, cookie, origin)).toBe(own);
  });
});
