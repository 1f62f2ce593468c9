import { toEnumValue } from '../../core/enum-value.js';
import type { Contract, JobFailure, VerificationJob, VerificationStatus } from './model.js';
import { scrubApiKey } from './upstream-answer.js';
import type { WireV2Contract, WireV2Job } from './wire-v2.js';

/* APIv2's answers as the domain model: contracts and jobs, nothing left out. */

const MATCHES = ['EXACT_MATCH', 'MATCH'] as const;

/** APIv2's `exact_match` / `match` as the graph's PERFECT / PARTIAL. */
function toStatus(match: string | null): VerificationStatus | null {
  if (match === null) return null;
  const value = toEnumValue(MATCHES, match);
  return value === 'EXACT_MATCH' ? 'PERFECT' : value === 'MATCH' ? 'PARTIAL' : 'UNKNOWN';
}

export function toContract(wire: WireV2Contract): Contract {
  return {
    chainId: wire.chainId,
    address: wire.address,
    match: toStatus(wire.match),
    creationMatch: toStatus(wire.creationMatch),
    runtimeMatch: toStatus(wire.runtimeMatch),
    verifiedAt: wire.verifiedAt,
    matchId: wire.matchId,
    compilation: wire.compilation && {
      compilerVersion: wire.compilation.compilerVersion,
      name: wire.compilation.name,
      compiledPath: pathOf(wire.compilation.fullyQualifiedName),
    },
  };
}

/** `contracts/Token.sol` of `contracts/Token.sol:Token`. */
function pathOf(fullyQualifiedName: string | null): string | null {
  const colon = fullyQualifiedName?.lastIndexOf(':') ?? -1;
  return fullyQualifiedName && colon > 0 ? fullyQualifiedName.slice(0, colon) : null;
}

/**
 * A job as the graph shows it. The error's message is kept whole (a compiler error embeds the
 * compiler's JSON), but never with an API key in it: `apiKey` when the caller's is known, and
 * anything shaped like an Etherscan key in any case.
 */
export function toJob(wire: WireV2Job, apiKey?: string): VerificationJob {
  return {
    id: wire.verificationId,
    completed: wire.isJobCompleted,
    startedAt: wire.jobStartTime,
    finishedAt: wire.jobFinishTime,
    compilationTimeMs: wire.compilationTime === null ? null : Number(wire.compilationTime),
    externalVerifications: wire.externalVerifications,
    contract: wire.contract ? toContract(wire.contract) : null,
    error: wire.error && toFailure(wire.error, apiKey),
  };
}

function toFailure(
  { customCode, message, ...reported }: NonNullable<WireV2Job['error']>,
  apiKey: string | undefined,
): JobFailure {
  return {
    ...reported,
    code: customCode,
    message: message === null ? null : scrubApiKey(message, apiKey),
  };
}
