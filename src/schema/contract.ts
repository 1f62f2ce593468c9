import type { Contract } from '../upstreams/verification/model.js';
import { builder } from './builder.js';
import { VerificationStatusEnum } from './verification.js';

type Types = typeof builder.$inferSchemaTypes;

/**
 * What a contract lookup and a list's item both say: where the contract is and how each of its
 * bytecodes matches. `match` is left to each: null (not verified) only where a lookup can answer
 * an unverified contract.
 */
const whereAndHowItMatches = (t: PothosSchemaTypes.ObjectFieldBuilder<Types, Contract>) => ({
  chainId: t.exposeString('chainId', { description: 'Decimal id of its chain, e.g. "1".' }),
  address: t.exposeString('address', { description: 'Its address, EIP-55 checksummed.' }),
  creationMatch: t.expose('creationMatch', {
    type: VerificationStatusEnum,
    nullable: true,
    description: 'How well the creation bytecode matches; null when not verified that way.',
  }),
  runtimeMatch: t.expose('runtimeMatch', {
    type: VerificationStatusEnum,
    nullable: true,
    description:
      'How well the deployed (runtime) bytecode matches; null when not verified that way.',
  }),
});

export const ContractRef = builder.objectRef<Contract>('Contract').implement({
  description:
    'A deployed contract and its source verification at the verification service (Sourcify). Other subgraphs can reference it by `chainId` and `address`.',
  fields: (t) => {
    const { chainId, address, creationMatch, runtimeMatch } = whereAndHowItMatches(t);
    return {
      chainId,
      address,
      verified: t.boolean({
        description: 'Whether the service has verified sources for it.',
        resolve: (contract) => contract.match !== null,
      }),
      match: t.expose('match', {
        type: VerificationStatusEnum,
        nullable: true,
        description: 'The better of its creation and runtime matches; null when not verified.',
      }),
      creationMatch,
      runtimeMatch,
      verifiedAt: t.expose('verifiedAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When it was verified; null when not verified.',
      }),
      matchId: t.exposeID('matchId', {
        nullable: true,
        description: "The service's id of the verified match, to link to its record.",
      }),
      name: t.string({
        nullable: true,
        description:
          "The contract's name, e.g. `Greeter`, from its verified compilation; null when not verified.",
        resolve: (contract) => contract.compilation?.name ?? null,
      }),
      compilerVersion: t.string({
        nullable: true,
        description:
          'The compiler version it was verified with, e.g. `0.8.24+commit.e11b9ed9`; null when not verified.',
        resolve: (contract) => contract.compilation?.compilerVersion ?? null,
      }),
    };
  },
});

/**
 * A contract of the service's lists: verified, by what the lists hold. The lists answer no
 * compilation (sourcify-server 3.12.1's list routes take no `fields`), so this type has no `name`
 * or `compilerVersion` rather than a null that would read "not verified": a client asks
 * `contracts(chainId:, addresses:)` for them, which is bounded and cached.
 */
export const ContractMatchRef = builder.objectRef<Contract>('ContractMatch').implement({
  description:
    "A verified contract as the service's lists give it (`contractOnAllChains`, `verifiedContracts`): where it is and how well it matches. The lists do not carry its name or compiler version: ask `contracts(chainId:, addresses:)` (up to 100 at once, batched and cached) or `contract(chainId:, address:)` for them.",
  fields: (t) => {
    const { chainId, address, creationMatch, runtimeMatch } = whereAndHowItMatches(t);
    return {
      chainId,
      address,
      match: t.field({
        type: VerificationStatusEnum,
        description:
          'The better of its creation and runtime matches (`UNKNOWN` if the service listed it without one).',
        resolve: (contract) => contract.match ?? 'UNKNOWN',
      }),
      creationMatch,
      runtimeMatch,
      verifiedAt: t.expose('verifiedAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When it was verified; null when the service did not say.',
      }),
      matchId: t.exposeID('matchId', {
        nullable: true,
        description:
          "The service's id of the verified match, to link to its record; null when the service did not give one.",
      }),
    };
  },
});

builder.asEntity(ContractRef, {
  key: builder.selection<{ chainId: string; address: string }>('chainId address'),
  // An entity always resolves: a contract the service has not verified is `verified: false`.
  resolveReference: async ({ chainId, address }, { contracts }) =>
    (await contracts.load({ chainId, address })) ?? {
      chainId,
      address,
      match: null,
      creationMatch: null,
      runtimeMatch: null,
      verifiedAt: null,
      matchId: null,
      compilation: null,
    },
});

builder.queryField('contract', (t) =>
  t.field({
    type: ContractRef,
    nullable: true,
    description:
      "A contract's source verification, from the verification service's APIv2 lookup. Null when it is not verified. Answers are served from memory for `VERIFY_LOOKUP_TTL_MS` (30 s), then revalidated with the service's ETag.",
    args: {
      chainId: t.arg.string({ required: true, description: 'Decimal chain id, e.g. "1".' }),
      address: t.arg.string({
        required: true,
        description: '0x and 40 hex digits; mixed case must be a valid EIP-55 checksum.',
      }),
    },
    resolve: (_root, { chainId, address }, { contracts }) => contracts.load({ chainId, address }),
  }),
);
