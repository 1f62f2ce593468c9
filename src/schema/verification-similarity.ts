import { builder } from './builder.js';
import {
  addressField,
  chainIdField,
  creationTransactionHashField,
  VerifyContractResultRef,
  verifying,
} from './verification.js';

/*
 * Verification by similarity (APIv2 only): no sources sent. The service looks for contracts it has
 * verified whose runtime bytecode resembles the one deployed at the address, and tries their
 * sources. The body is a hash at most: no upload allowance.
 */

const VerifyBySimilarityInputRef = builder.inputType('VerifyBySimilarityInput', {
  description:
    "A deployed contract to verify from the sources of a similar contract the service has verified, as the service's `POST /v2/verify/similarity/{chainId}/{address}` takes it.",
  fields: (t) => ({
    address: t.string(addressField),
    chainId: t.string(chainIdField),
    creationTransactionHash: t.string(creationTransactionHashField),
  }),
});

builder.mutationField('verifyContractBySimilarity', (t) =>
  t.field({
    type: VerifyContractResultRef,
    description:
      "Verifies a deployed contract without sources (APIv2): the service searches the contracts it has verified for ones whose runtime bytecode resembles this one's, and tries their sources until one matches. Useful for a contract deployed from a factory or a copy of a verified one. The gateway waits for the job up to `VERIFY_WAIT_MS` and answers its outcome, or `VerificationPending` to follow with `verificationJobChanged`; a job that finds nothing fails with `VerificationRejectedError` `NO_SIMILAR_MATCH_FOUND`. Counts against the same per-client allowance as `verifyContract`. Expected failures are results: switch on `__typename`.",
    args: { input: t.arg({ type: VerifyBySimilarityInputRef, required: true }) },
    resolve: (_root, { input }, context) =>
      verifying(context, () => context.verification.verifyBySimilarity(input, context.requestId)),
  }),
);
