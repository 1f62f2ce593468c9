import type { z } from 'zod';
import type { Unknown } from '../../core/enum-value.js';
import type { WireChain } from './wire.js';
import type { WireV2Job } from './wire-v2.js';

export const VERIFICATION_STATUSES = [
  'PERFECT',
  'PARTIAL',
  'EXTRA_FILE_INPUT_BUG',
  'ERROR',
] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number] | Unknown;

/** Block explorers the upstream can fetch verified sources from, by their path segment. */
export const EXPLORER_PATHS = { ETHERSCAN: 'etherscan' } as const;
export type Explorer = keyof typeof EXPLORER_PATHS;

export interface VerifyContractInput {
  readonly address: string;
  readonly chainId: string;
  /** The caller's explorer API key: forwarded upstream, never logged, never echoed. */
  readonly apiKey?: string | null;
  readonly explorer: Explorer;
}

export interface ContractFiles {
  readonly found: readonly string[];
  readonly missing: readonly string[];
  readonly invalid: readonly string[];
}

/**
 * A contract in a verification answer. The session API reports all but `compilerVersion` (which
 * sourcify-server 3.9.1 leaves out); APIv2 reports the match, address, chain and time only. What
 * is not reported is null rather than made up; the schema looks the missing compilation up for a
 * matched contract (APIv2's contract lookup).
 */
export interface VerifiedContract {
  readonly verificationId: string;
  readonly compiledPath: string | null;
  readonly name: string | null;
  readonly compilerVersion: string | null;
  readonly address: string | null;
  readonly chainId: string | null;
  readonly files: ContractFiles | null;
  readonly status: VerificationStatus;
  readonly statusMessage: string | null;
  readonly storageTimestamp: Date | null;
}

/** The contracts of the caller's upstream session after the request. */
export interface VerificationResult {
  readonly kind: 'result';
  readonly contracts: readonly VerifiedContract[];
  readonly unused: readonly string[];
  /** APIv2: the contract was verified before; `contracts` shows the existing match. */
  readonly alreadyVerified: boolean;
  /** APIv2: the job as the service reported it, when the answer came from one. */
  readonly job: VerificationJob | null;
}

/** An APIv2 verification job that had not finished when the gateway stopped waiting. */
export interface VerificationPending {
  readonly kind: 'pending';
  readonly verificationId: string;
  readonly startedAt: Date | null;
  /** Whether it has run longer than `VERIFY_JOB_STALE_MS`. */
  readonly stale: boolean;
  /** What the user can do now: follow the job, or, for a stale one, what to do about it. */
  readonly message: string;
  /** The job as the service reported it; null when the gateway has not seen it yet. */
  readonly job: VerificationJob | null;
}

export type VerificationOutcome = VerificationResult | VerificationPending;

/** Which of the verification service's APIs the gateway speaks. */
export type VerifyApi = 'session' | 'v2';

/** Where APIv2 mirrored a verification (Etherscan, Blockscout, Routescan), as the job reports it. */
export type ExternalVerifications = NonNullable<WireV2Job['externalVerifications']>;
export type ExternalVerification = NonNullable<ExternalVerifications['etherscan']>;

/**
 * Why an APIv2 job failed, with everything the service said about it; `code` is its `customCode`,
 * e.g. `no_match`, `compiler_timeout`.
 */
export type JobFailure = Omit<NonNullable<WireV2Job['error']>, 'customCode'> & {
  readonly code: string;
};

/** An APIv2 verification job, every field the service reports (`GET /v2/verify/{id}`). */
export interface VerificationJob {
  readonly id: string;
  readonly completed: boolean;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  /** How long the service took to compile, in ms. */
  readonly compilationTimeMs: number | null;
  readonly externalVerifications: ExternalVerifications | null;
  /** The contract the job is about; its matches are null until it is verified. */
  readonly contract: Contract | null;
  readonly error: JobFailure | null;
}

/** A verification from a Solidity (or Vyper, Fe) standard JSON input, over APIv2. */
export interface VerifyFromSourceInput {
  readonly address: string;
  readonly chainId: string;
  readonly stdJsonInput: unknown;
  readonly compilerVersion: string;
  /** `path/to/File.sol:Contract`. */
  readonly contractIdentifier: string;
  readonly creationTransactionHash?: string | null;
}

/** A verification from a Solidity metadata.json and its sources (path → content), over APIv2. */
export interface VerifyFromMetadataInput {
  readonly address: string;
  readonly chainId: string;
  readonly metadata: unknown;
  readonly sources: unknown;
  readonly creationTransactionHash?: string | null;
}

/**
 * A verification by similarity (APIv2): the service looks for verified contracts whose runtime
 * bytecode resembles the one deployed at the address, and tries their sources.
 */
export interface VerifyBySimilarityInput {
  readonly address: string;
  readonly chainId: string;
  readonly creationTransactionHash?: string | null;
}

/** A contract's verification at the service (APIv2 lookup). */
export interface Contract {
  readonly chainId: string;
  readonly address: string;
  /** The better of the two matches; null when the contract is not verified. */
  readonly match: VerificationStatus | null;
  readonly creationMatch: VerificationStatus | null;
  readonly runtimeMatch: VerificationStatus | null;
  readonly verifiedAt: Date | null;
  readonly matchId: string | null;
  /** How it was compiled, when the lookup asked for it and the service reported it. */
  readonly compilation: Compilation | null;
}

/** A verified contract's compilation, as APIv2's lookup reports it (`fields=compilation.…`). */
export interface Compilation {
  /** e.g. `0.8.24+commit.e11b9ed9`. */
  readonly compilerVersion: string | null;
  /** The contract's name, e.g. `Greeter`. */
  readonly name: string | null;
  /** The source file that defines it, e.g. `contracts/Greeter.sol`. */
  readonly compiledPath: string | null;
}

/** A chain of the service's list: decimal `id` (e.g. `1`), name, and what it verifies there. */
export type Chain = z.output<typeof WireChain>;
