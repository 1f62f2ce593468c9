import { GraphQLError, responsePathAsArray } from 'graphql';
import { isUpstreamError } from '../errors/upstream-error.js';
import type { Chain } from '../upstreams/verification/model.js';
import { builder } from './builder.js';

const ChainRef = builder.objectRef<Chain>('Chain').implement({
  description: 'A chain the verification service can verify contracts on.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Decimal chain id, e.g. `1`; pass it as `chainId`.' }),
    name: t.exposeString('name', { description: 'Name of the chain, e.g. "Ethereum Mainnet".' }),
    supportsExplorerVerification: t.exposeBoolean('explorerVerification', {
      description:
        "Whether `verifyContract` can fetch sources from the chain's block explorer. When false, the chain is supported but not through an explorer.",
    }),
  }),
});

builder.queryField('supportedChains', (t) =>
  t.field({
    type: [ChainRef],
    description:
      'The chains the verification service verifies contracts on. Empty, with an error beside it, when the service has no chain list; `verifyContract` then leaves the check to the service.',
    resolve: async (_root, _args, { verification, partialErrors, requestId }, info) => {
      try {
        return await verification.supportedChains(requestId);
      } catch (error) {
        if (!isUpstreamError(error)) throw error;
        partialErrors.push(
          new GraphQLError(error.message, {
            path: responsePathAsArray(info.path),
            extensions: error.extensions,
          }),
        );
        return [];
      }
    },
  }),
);
