import { jsonResponse } from '../json-response.js';
import type { SimulatorResponse, UpstreamRequest } from '../upstream.js';
import { parseAddress, toChecksumAddress } from './address.js';
import type { MatchStorage, StoredMatch } from './match-storage.js';
import type { SourcifyChain, SourcifyV2Contract } from './types.js';
import { SOURCIFY_V2_MESSAGES, v2Error } from './v2-errors.js';
import {
  ADDRESS_SCHEMA,
  CHAIN_ID_SCHEMA,
  levelOf,
  paramIssues,
  wholeSeconds,
} from './v2-shapes.js';

/*
 * APIv2's lookups of many contracts: `GET /v2/contract/all-chains/{address}` (one address on every
 * chain, deprecated ones included) and `GET /v2/contracts/{chainId}?sort&limit&afterMatchId` (a
 * chain's verified contracts, by match id), over the match storage.
 */

export interface V2LookupContext {
  chain(chainId: string): SourcifyChain | undefined;
  storage(): MatchStorage;
  unsupportedChainStatus(): 400 | 404;
}

/** The most `limit` may ask for (apiv2.yaml). */
const MAX_LIMIT = 200;

/** `VerifiedContractMinimal` of a stored match, in the order the list's items have. */
function minimal(key: string, match: StoredMatch): SourcifyV2Contract | null {
  const level = levelOf(match.status);
  if (level === null) return null;
  const colon = key.indexOf(':');
  return {
    match: level,
    creationMatch: level,
    runtimeMatch: level,
    chainId: key.slice(0, colon),
    address: toChecksumAddress(key.slice(colon + 1)),
    verifiedAt: wholeSeconds(match.storageTimestamp),
    matchId: match.matchId,
  };
}

/** The validator's complaint about query parameters it does not document, or null. */
function unknownQueryParameter(request: UpstreamRequest, known: readonly string[]): string | null {
  for (const name of request.query.keys()) {
    if (!known.includes(name)) return `Unknown query parameter '${name}'`;
  }
  return null;
}

export function createV2Lookups(context: V2LookupContext) {
  return {
    /** `GET /v2/contract/all-chains/{address}`: 404 with an empty list when verified nowhere. */
    allChains(request: UpstreamRequest, rawAddress: string): SimulatorResponse {
      const issue =
        unknownQueryParameter(request, []) ?? paramIssues('address', rawAddress, ADDRESS_SCHEMA)[0];
      if (issue) return v2Error(400, 'invalid_parameter', issue);
      const address = parseAddress(rawAddress);
      if (address === null) {
        return v2Error(400, 'invalid_parameter', SOURCIFY_V2_MESSAGES.invalidAddress(rawAddress));
      }
      const suffix = `:${address.toLowerCase()}`;
      const results = [...context.storage().entries()]
        .filter(([key]) => key.endsWith(suffix))
        .map(([key, match]) => minimal(key, match))
        .filter((contract) => contract !== null);
      return jsonResponse(results.length === 0 ? 404 : 200, { results });
    },

    /** `GET /v2/contracts/{chainId}`: newest first by default, `limit` per page, after a match. */
    contracts(request: UpstreamRequest, rawChainId: string): SimulatorResponse {
      const { query } = request;
      const sort = query.get('sort') ?? 'desc';
      const rawLimit = query.get('limit');
      const limit = rawLimit === null ? MAX_LIMIT : Number(rawLimit);
      const after = query.get('afterMatchId');
      const issue =
        unknownQueryParameter(request, ['sort', 'limit', 'afterMatchId']) ??
        paramIssues('chainId', rawChainId, CHAIN_ID_SCHEMA)[0] ??
        (sort !== 'asc' && sort !== 'desc'
          ? 'request/query/sort must be equal to one of the allowed values: asc, desc'
          : rawLimit !== null && (rawLimit.trim() === '' || Number.isNaN(limit))
            ? 'request/query/limit must be number'
            : limit < 1
              ? 'request/query/limit must be >= 1'
              : limit > MAX_LIMIT
                ? `request/query/limit must be <= ${MAX_LIMIT}`
                : after !== null && !/^\d+$/.test(after)
                  ? 'request/query/afterMatchId must match pattern "^\\d+$"'
                  : undefined);
      if (issue) return v2Error(400, 'invalid_parameter', issue);
      if (!context.chain(rawChainId)) {
        return v2Error(
          context.unsupportedChainStatus(),
          'unsupported_chain',
          SOURCIFY_V2_MESSAGES.chainNotFound(rawChainId),
        );
      }
      const prefix = `${rawChainId}:`;
      const direction = sort === 'asc' ? 1 : -1;
      const results = [...context.storage().entries()]
        .filter(([key, match]) => {
          if (!key.startsWith(prefix)) return false;
          if (after === null) return true;
          const id = BigInt(match.matchId);
          return direction === 1 ? id > BigInt(after) : id < BigInt(after);
        })
        .sort(([, a], [, b]) => direction * Number(BigInt(a.matchId) - BigInt(b.matchId)))
        .map(([key, match]) => minimal(key, match))
        .filter((contract) => contract !== null)
        .slice(0, Math.floor(limit));
      return jsonResponse(200, { results });
    },
  };
}
