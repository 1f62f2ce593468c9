import { describe, expect, it } from 'vitest';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { startHarness } from '../helpers/harness.js';
import { sessionEra } from '../helpers/session-era.js';

const contract = VERIFIABLE_CONTRACTS.find((candidate) => candidate.name === 'Greeter');
const body = JSON.stringify({
  query: `mutation ($input: VerifyContractInput!) { verifyContract(input: $input) { __typename } }`,
  variables: { input: { address: contract?.address, chainId: contract?.chainId } },
});

describe('odd session cookies from the verification service', () => {
  it('keeps a quoted cookie value and caps an absurd Max-Age', async () => {
    const harness = await startHarness(sessionEra());
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
    await harness.close();
  });
});
