import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type Simulator,
  type SourcifyV2ErrorBody,
  type SourcifyV2Job,
  startSimulator,
} from '../src/server.js';
import { fixtureContract } from '../src/verification/fixture.js';

/* `POST /v2/verify/similarity/{chainId}/{address}` as apiv2.yaml and sourcify-server answer it. */

const WETH = fixtureContract('WETH9');
const DAI = fixtureContract('Dai');
/** A copy of WETH9 (the same compilation) deployed on Sepolia. */
const COPY = {
  ...WETH,
  chainId: '11155111',
  address: '0x7Bec3080cdf73a9a39997C860c19377Ac1E6E6BE',
};
const { storageTimestamp: _, ...COPY_UNVERIFIED } = COPY;
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

async function post<T = unknown>(chainId: string, address: string, body: unknown = {}) {
  const response = await fetch(`${sim.verifyBaseUrl}/v2/verify/similarity/${chainId}/${address}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function job(id: string): Promise<SourcifyV2Job> {
  const response = await fetch(`${sim.verifyBaseUrl}/v2/verify/${id}`);
  return (await response.json()) as SourcifyV2Job;
}

describe('POST /v2/verify/similarity/{chainId}/{address}', () => {
  it('verifies a contract whose compilation a stored match has', async () => {
    sim.verification.addContract(COPY_UNVERIFIED);
    sim.verification.setJobDelay(0);
    const accepted = await post<{ verificationId: string }>(COPY.chainId, COPY.address, {
      creationTransactionHash: `0x${'1'.repeat(64)}`,
    });
    expect(accepted.status).toBe(202);
    const done = await job(accepted.body.verificationId);
    expect(done).toMatchObject({
      isJobCompleted: true,
      contract: { match: 'exact_match', chainId: COPY.chainId, address: COPY.address },
    });
    expect(done.error).toBeUndefined();
    expect(sim.verification.received.at(-1)).toMatchObject({
      api: 'v2',
      explorer: 'similarity',
      status: 202,
    });
  });

  it('fails the job with no_similar_match_found, its contract unmatched, when no stored match resembles it', async () => {
    sim.verification.setJobDelay(0);
    const accepted = await post<{ verificationId: string }>(DAI.chainId, DAI.address);
    expect(accepted.status).toBe(202);
    expect(await job(accepted.body.verificationId)).toMatchObject({
      isJobCompleted: true,
      contract: { match: null, creationMatch: null, runtimeMatch: null },
      error: {
        customCode: 'no_similar_match_found',
        message: 'No similar verified contracts were found in the database.',
      },
    });
  });

  it('answers the real errors: no bytecode, the RPC failing, already verified, being verified, bad input', async () => {
    const noBytecode = await post<SourcifyV2ErrorBody>('1', NOBODY);
    expect(noBytecode).toMatchObject({
      status: 404,
      body: {
        customCode: 'cannot_fetch_bytecode',
        message: `There is no bytecode at address ${NOBODY} on chain 1.`,
      },
    });
    sim.verification.setOutcome(
      { chainId: DAI.chainId, address: DAI.address },
      { reject: 'failed_to_get_bytecode' },
    );
    expect(await post<SourcifyV2ErrorBody>(DAI.chainId, DAI.address)).toMatchObject({
      status: 502,
      body: { customCode: 'failed_to_get_bytecode' },
    });
    expect(await post<SourcifyV2ErrorBody>(WETH.chainId, WETH.address)).toMatchObject({
      status: 409,
      body: { customCode: 'already_verified' },
    });
    sim.verification.setOutcome({ chainId: DAI.chainId, address: DAI.address }, null);
    sim.verification.setJobDelay(null);
    expect((await post(DAI.chainId, DAI.address)).status).toBe(202);
    expect(await post<SourcifyV2ErrorBody>(DAI.chainId, DAI.address)).toMatchObject({
      status: 429,
      body: { customCode: 'duplicate_verification_request' },
    });
    expect(await post<SourcifyV2ErrorBody>('1', 'invalid-address')).toMatchObject({
      status: 400,
      body: { customCode: 'invalid_parameter' },
    });
    expect(await post<SourcifyV2ErrorBody>('424242', DAI.address)).toMatchObject({
      status: 400,
      body: { customCode: 'unsupported_chain' },
    });
    expect(
      await post<SourcifyV2ErrorBody>(DAI.chainId, DAI.address, {
        creationTransactionHash: '0x12',
      }),
    ).toMatchObject({ status: 400, body: { customCode: 'invalid_parameter' } });
  });
});
