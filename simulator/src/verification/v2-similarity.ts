import type { VerifiableContract } from './fixture.js';
import type { MatchStorage } from './match-storage.js';
import { SOURCIFY_V2_MESSAGES } from './v2-errors.js';
import { isRecord, levelOf } from './v2-shapes.js';
import type { SourceVerdict } from './v2-sources.js';

/*
 * Verification by similarity (`POST /v2/verify/similarity/{chainId}/{address}`, sourcify#2481):
 * Sourcify reads the runtime bytecode deployed at the address (a 502 `failed_to_get_bytecode`
 * when its RPC fails, 404 `cannot_fetch_bytecode` when there is none) before it answers 202, then
 * the job looks for verified contracts whose runtime bytecode resembles it and tries their
 * sources; none found fails the job with `no_similar_match_found`. Nothing is compiled here: a
 * contract is deployed where the fixture has one, and its bytecode resembles that of every other
 * stored match of the same compilation (name, path, compiler and sources).
 */

/** apiv2.yaml's `Keccak256` pattern: lowercase. */
const KECCAK256 = '(\\b0x[a-f0-9]{64}\\b)';

/** The validator's first complaint about a similarity body (`SimilarityVerificationRequest`). */
export function similarityBodyIssue(body: unknown): string | null {
  if (!isRecord(body)) return SOURCIFY_V2_MESSAGES.mustBeObject('request/body');
  const hash = body.creationTransactionHash;
  if (hash === undefined) return null;
  if (typeof hash !== 'string') {
    return SOURCIFY_V2_MESSAGES.mustBeString('request/body/creationTransactionHash');
  }
  return new RegExp(KECCAK256, 'u').test(hash)
    ? null
    : SOURCIFY_V2_MESSAGES.mustMatchPattern('request/body/creationTransactionHash', KECCAK256);
}

const sameCompilation = (a: VerifiableContract, b: VerifiableContract): boolean =>
  a.name === b.name &&
  a.compiledPath === b.compiledPath &&
  a.compilerVersion === b.compilerVersion &&
  a.sources.join('\n') === b.sources.join('\n');

/**
 * What the similarity job will end with for the contract deployed at `key`: a match when a stored
 * match elsewhere has its compilation, else `no_similar_match_found`.
 */
export function judgeSimilarity(
  key: string,
  deployed: VerifiableContract,
  storage: MatchStorage,
  contractAt: (key: string) => VerifiableContract | undefined,
): SourceVerdict {
  for (const [other, match] of storage.entries()) {
    const candidate = contractAt(other);
    if (other !== key && levelOf(match.status) !== null && candidate) {
      if (sameCompilation(candidate, deployed)) return { matches: true };
    }
  }
  return {
    matches: false,
    code: 'no_similar_match_found',
    message: SOURCIFY_V2_MESSAGES.noSimilarMatchFound,
  };
}
