import { describe, expect, it } from 'vitest';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { eventually } from '../helpers/eventually.js';
import { startHarness } from '../helpers/harness.js';

const VERIFY = `mutation ($input: VerifyContractInput!) {
  verifyContract(input: $input) { __typename ... on VerificationPending { verificationId } }
}`;

describe('shutting down during an APIv2 verification', () => {
  it('answers the verification in flight with its job id, at once', async () => {
    const harness = await startHarness({
      env: { VERIFY_API: 'v2', VERIFY_WAIT_MS: 20_000, VERIFY_POLL_INTERVAL_MS: 100 },
    });
    // A job of 15 s: within VERIFY_WAIT_MS, so without the shutdown the caller would wait it out.
    harness.simulator.verification.setJobDelay(15_000);
    // Not yet verified at the service, so the verification is a job.
    const contract = VERIFIABLE_CONTRACTS.find((candidate) => candidate.name === 'Greeter');
    const answer = harness.execute<{
      verifyContract: { __typename: string; verificationId: string };
    }>(VERIFY, { input: { address: contract?.address, chainId: contract?.chainId } });
    await eventually(() => harness.simulator.verification.jobs().length > 0);
    await harness.gateway.close();
    const { body } = await answer;
    expect(body.data?.verifyContract).toEqual({
      __typename: 'VerificationPending',
      verificationId: harness.simulator.verification.jobs()[0]?.verificationId,
    });
    await harness.close();
  });
});
