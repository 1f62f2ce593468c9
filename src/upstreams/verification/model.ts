import type { Unknown } from '../enum-value.js';

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

export interface VerifiedContract {
  readonly verificationId: string;
  readonly compiledPath: string;
  readonly name: string;
  readonly compilerVersion: string | null;
  readonly address: string | null;
  readonly chainId: string | null;
  readonly files: ContractFiles;
  readonly status: VerificationStatus;
  readonly statusMessage: string | null;
  readonly storageTimestamp: Date | null;
}

/** The contracts of the caller's upstream session after the request. */
export interface VerificationResult {
  readonly contracts: readonly VerifiedContract[];
  readonly unused: readonly string[];
}

export interface Chain {
  /** Decimal chain id, e.g. `1`. */
  readonly id: string;
  readonly name: string;
  /** Whether the upstream verifies contracts on this chain at all. */
  readonly supported: boolean;
  /** Whether it can fetch sources from the block explorer for this chain. */
  readonly explorerVerification: boolean;
}
