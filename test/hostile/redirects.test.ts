import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { listen } from '../helpers/listen.js';

describe('redirects from an upstream', () => {
  let harness: Harness;
  // Another address, counting what reaches it: nothing may.
  let elsewhere: Server;
  let reached: string[];
  let location: string;

  beforeAll(async () => {
    reached = [];
    elsewhere = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += String(chunk);
      });
      req.on('end', () => {
        reached.push(`${req.method} ${req.url} ${body}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    location = `${(await listen(elsewhere)).origin}/collect`;
    harness = await startHarness({ env: { UPSTREAM_RETRIES: 0 } });
  });
  afterAll(async () => {
    await harness.close();
    await new Promise((resolve) => elsewhere.close(resolve));
  });

  it('never re-sends a verification, and its apiKey, where the service redirects it', async () => {
    harness.simulator.setFault('verify', '*', {
      kind: 'status',
      status: 307,
      headers: { location },
    });
    const contract = VERIFIABLE_CONTRACTS.find((candidate) => candidate.name === 'Greeter');
    const { body } = await harness.execute<{
      verifyContract: { __typename: string; message: string };
    }>(
      `mutation ($input: VerifyContractInput!) {
        verifyContract(input: $input) { __typename ... on Error { message } }
      }`,
      {
        input: {
          address: contract?.address,
          chainId: contract?.chainId,
          apiKey: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ123456',
        },
      },
    );
    expect(body.data?.verifyContract.__typename).toBe('UpstreamUnavailableError');
    expect(body.data?.verifyContract.message).toContain('redirect (HTTP 307)');
    expect(reached).toEqual([]);
    harness.simulator.clearFaults();
  });

  it('does not follow the status feed to another address either', async () => {
    harness.simulator.setFault('status', '*', {
      kind: 'status',
      status: 302,
      headers: { location },
    });
    const { body } = await harness.execute('{ statusPage { name } }');
    expect(body.errors?.[0]?.message).toBe(
      'The status feed GET /summary.json is unavailable: it answered a redirect (HTTP 302); the gateway follows none, so that nothing it sends reaches another address',
    );
    expect(reached).toEqual([]);
    harness.simulator.clearFaults();
  });
});
