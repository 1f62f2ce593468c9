import { InvalidInputError } from '../errors/invalid-input-error.js';
import { UpstreamBadResponseError } from '../errors/upstream-bad-response-error.js';
import { checkAddress, checkChainId } from '../upstreams/verification/input.js';
import type { Contract } from '../upstreams/verification/model.js';
import {
  MAX_LOOKUP_ADDRESSES,
  MAX_PAGE_SIZE,
} from '../upstreams/verification/verification-service.js';
import { builder } from './builder.js';
import { connectionOf } from './connection.js';
import { ContractMatchRef, ContractRef } from './contract.js';

/*
 * Lookups of many contracts at once: of one chain by address, of one address on every chain, and
 * a chain's verified contracts page by page. All read the service's APIv2 and are never cached by
 * the response cache.
 */

/** `first` when the client does not say. */
const DEFAULT_PAGE_SIZE = 20;

const ContractMatchConnectionRef = connectionOf('ContractMatch', ContractMatchRef, {
  description:
    'A page of verified contracts, newest first, as the service lists them (no name or compiler version: see `ContractMatch`).',
  edge: 'A verified contract of a page, with its cursor.',
  after: 'the contracts verified before this one',
  items: 'contracts',
});

builder.queryField('contracts', (t) =>
  t.field({
    type: [ContractRef],
    nullable: { list: false, items: true },
    description: `Many contracts of one chain in one request (at most ${MAX_LOOKUP_ADDRESSES} addresses); null where not verified. The answers are in the order of \`addresses\`. Lookups are batched with every other contract lookup of the operation, at most \`VERIFY_LOOKUP_CONCURRENCY\` in flight to the service at once, and served from memory for \`VERIFY_LOOKUP_TTL_MS\` (30 s), then revalidated with the service's ETag. A lookup that fails is null with an error at its index.`,
    args: {
      chainId: t.arg.string({ required: true, description: 'Decimal chain id, e.g. "1".' }),
      addresses: t.arg.stringList({
        required: true,
        description: `Up to ${MAX_LOOKUP_ADDRESSES} addresses: 0x and 40 hex digits each; mixed case must be a valid EIP-55 checksum.`,
      }),
    },
    resolve: (_root, { chainId, addresses }, { contracts }) => {
      if (addresses.length > MAX_LOOKUP_ADDRESSES) {
        throw new InvalidInputError(
          'addresses',
          `addresses has ${addresses.length} addresses; contracts looks up at most ${MAX_LOOKUP_ADDRESSES} in one call.`,
        );
      }
      checkChainId(chainId);
      for (const [index, address] of addresses.entries())
        checkAddress(address, `addresses[${index}]`);
      return addresses.map((address) => contracts.load({ chainId, address }));
    },
  }),
);

builder.queryField('contractOnAllChains', (t) =>
  t.field({
    type: [ContractMatchRef],
    description:
      "One address on every chain where it is verified (the service's `GET /v2/contract/all-chains/{address}`, deprecated chains included); empty where it is verified nowhere. The list carries no name or compiler version (see `ContractMatch`): ask `contract(chainId:, address:)` for them.",
    args: {
      address: t.arg.string({
        required: true,
        description: '0x and 40 hex digits; mixed case must be a valid EIP-55 checksum.',
      }),
    },
    resolve: (_root, { address }, { verification, requestId }) =>
      verification.contractOnAllChains(address, requestId),
  }),
);

builder.queryField('verifiedContracts', (t) =>
  t.field({
    type: ContractMatchConnectionRef,
    description: `The verified contracts of a chain, newest first, as a cursor connection (the service's \`GET /v2/contracts/{chainId}\`): \`first\` (1 to ${MAX_PAGE_SIZE}, ${DEFAULT_PAGE_SIZE} when left out) after the cursor \`after\`. The list carries no name or compiler version (see \`ContractMatch\`): pass a page's addresses to \`contracts(chainId:, addresses:)\` for them.`,
    args: {
      chainId: t.arg.string({ required: true, description: 'Decimal chain id, e.g. "1".' }),
      first: t.arg.int({
        required: false,
        description: `How many contracts, 1 to ${MAX_PAGE_SIZE}; ${DEFAULT_PAGE_SIZE} when left out.`,
      }),
      after: t.arg.string({
        required: false,
        description: 'The `endCursor` of the page before; the newest contracts when left out.',
      }),
    },
    resolve: async (_root, { chainId, first, after }, { verification, requestId }) => {
      const size = first ?? DEFAULT_PAGE_SIZE;
      if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
        throw new InvalidInputError('first', `first must be from 1 to ${MAX_PAGE_SIZE}.`);
      }
      checkChainId(chainId);
      const afterMatchId = after === null || after === undefined ? null : matchIdOf(after, chainId);
      // One more than asked: whether there is a next page.
      const found = await verification.verifiedContracts(
        chainId,
        { limit: size + 1, afterMatchId },
        requestId,
      );
      const edges = found.slice(0, size).map((node) => ({ node, cursor: cursorOf(chainId, node) }));
      return {
        edges,
        pageInfo: {
          hasNextPage: found.length > size,
          hasPreviousPage: afterMatchId !== null,
          startCursor: edges[0]?.cursor ?? null,
          endCursor: edges.at(-1)?.cursor ?? null,
        },
      };
    },
  }),
);

const CURSOR = /^contracts:(\d{1,20}):(\d{1,20})$/;

/** A page's cursor: the chain and the service's match id, opaque to clients. */
function cursorOf(chainId: string, contract: Contract): string {
  if (contract.matchId === null || !/^\d{1,20}$/.test(contract.matchId)) {
    throw new UpstreamBadResponseError(
      { upstream: 'verification service', method: 'GET', path: `/v2/contracts/${chainId}` },
      'a listed contract has no matchId',
    );
  }
  return Buffer.from(`contracts:${chainId}:${contract.matchId}`).toString('base64url');
}

/** The match id a cursor stands for; a cursor of another chain, or not one, is refused. */
function matchIdOf(cursor: string, chainId: string): string {
  const text = cursor.length > 100 ? '' : Buffer.from(cursor, 'base64url').toString();
  const [, chain, matchId] = CURSOR.exec(text) ?? [];
  if (chain !== chainId || matchId === undefined) {
    throw new InvalidInputError(
      'after',
      'after must be an endCursor that verifiedContracts answered for this chainId.',
    );
  }
  return matchId;
}
