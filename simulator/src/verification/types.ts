/**
 * Wire format of Sourcify's session verification API (`POST /session/verify/etherscan`,
 * `GET /chains`), as its server sends it. Fields Sourcify leaves `undefined` are absent from the
 * JSON, never `null`.
 */

/**
 * The real servers the simulator models where they differ:
 * - `latest`: today's Sourcify (`https://sourcify.dev/server`): APIv2 only (every route, job
 *   reaper codes, external verifications, ETags on lookups), no session API, APIv1 gone;
 *   `unsupported_chain` is 400;
 * - `3.12.1`: APIv2 only, as `latest` for everything modelled;
 * - `3.9.1`: the last with the session API, beside APIv2 (which answers `unsupported_chain` with
 *   404);
 * - `session-only`: a server from before APIv2: the session API, and an Express 404 page for every
 *   `/v2` route.
 */
export type SourcifyServerVersion = 'latest' | '3.12.1' | '3.9.1' | 'session-only';

/** `perfect` and `partial` are matches; `error` is also what a contract not yet verified shows. */
export type SourcifyVerificationStatus = 'perfect' | 'partial' | 'error' | 'extra-file-input-bug';

/** A source the metadata names but the session lacks, keyed by its path in `files.missing`. */
export interface SourcifyMissingSource {
  /** `0x` + 64 hex digits: the hash the metadata expects. */
  keccak256: string;
  /** Where Sourcify would fetch it from, e.g. `dweb:/ipfs/Qm…`, `bzz-raw://…`. */
  urls: string[];
}

/** A source whose content does not hash to what the metadata expects. */
export interface SourcifyInvalidSource {
  expectedHash: string;
  calculatedHash: string;
  /** Kept by Sourcify for its legacy UI. */
  msg?: string;
}

/** An ABI parameter, as in the `inputs` of the contract's constructor. */
export interface SourcifyAbiParameter {
  internalType?: string;
  name: string;
  type: string;
  components?: SourcifyAbiParameter[];
}

/** One contract of a session, as `getSessionJSON` sends it. */
export interface SourcifySessionContract {
  /** Sourcify's id for the contract within the session (a hash of its metadata). */
  verificationId: string;
  /** The constructor's inputs; absent when the ABI has no constructor. */
  constructorArgumentsArray?: SourcifyAbiParameter[];
  /** Path of the source file that defines the contract, e.g. `contracts/Greeter.sol`. */
  compiledPath: string;
  name: string;
  /**
   * Sent by older servers only (it is in the OpenAPI example); sourcify-server 3.9.1 never sends
   * it, and the simulator does not either.
   */
  compilerVersion?: string;
  /** EIP-55 checksummed. */
  address?: string;
  /** Decimal, as a string: `"1"`. */
  chainId?: string;
  files: {
    found: string[];
    /** Keyed by path; `{}` when nothing is missing. */
    missing: Record<string, SourcifyMissingSource>;
    /** Keyed by path; `{}` when nothing is invalid. */
    invalid: Record<string, SourcifyInvalidSource>;
  };
  status: SourcifyVerificationStatus;
  /** Why verification failed; `""` for a match verified by this answer; absent for a stored one. */
  statusMessage?: string;
  /** ISO 8601 with milliseconds; only when the match was already in Sourcify's storage. */
  storageTimestamp?: string;
}

/** The whole session: every contract added so far, oldest first. */
export interface SourcifySessionResponse {
  contracts: SourcifySessionContract[];
  /** Paths of session files no contract uses. */
  unused: string[];
  /** Paths of every file in the session (sent by current servers, not by older ones). */
  files: string[];
}

/**
 * An entry of `GET /chains`. The real servers (3.9.1 and 3.12.1, 260 entries) send
 * `{ name, chainId, rpc: [], traceSupportedRPCs: [], supported, etherscanAPI }`.
 */
export interface SourcifyChain {
  name: string;
  /** Sent by older servers only. */
  title?: string;
  chainId: number;
  /** RPC URLs without provider keys; empty on the real servers observed. */
  rpc: string[];
  /** Always sent (`[]` when absent on input). */
  traceSupportedRPCs?: Array<{ type: string; index: number }>;
  /**
   * Whether Sourcify verifies contracts on this chain at all; false for its deprecated chains
   * (e.g. 5, Goerli), on which APIv2 fails with 500 `internal_error`.
   */
  supported: boolean;
  /**
   * Whether it can import verified sources from Etherscan for this chain. Older servers sent the
   * explorer's API URL instead (absent or `undefined` when there was none).
   */
  etherscanAPI: boolean | string;
}

/** How Sourcify's error handler answers most errors (`error` is kept for old clients). */
export interface SourcifyErrorBody {
  error: string;
  message: string;
}

/** How its OpenAPI request validator answers a request that does not match the schema. */
export interface SourcifyValidationErrorBody {
  /** Every error's message, joined with `, `. */
  message: string;
  errors: Array<{ path: string; message: string; errorCode?: string }>;
}

/*
 * Sourcify's APIv2 (`/v2/...`, apiv2.yaml), the only API of sourcify-server 3.10.0 and later.
 * Fields its server leaves `undefined` are absent from the JSON; nullable ones are `null`.
 */

/** `exact_match` when the metadata hash matches too (the session API's `perfect`), else `match`. */
export type SourcifyMatchLevel = 'exact_match' | 'match';

/** Every APIv2 error: `GenericErrorResponse`. */
export interface SourcifyV2ErrorBody {
  /** e.g. `unsupported_chain`, `job_not_found`. */
  customCode: string;
  message: string;
  /** A new UUID for each error, for Sourcify's logs. */
  errorId: string;
}

/** The error of a failed job: `MatchingErrorResponse` (the bytecodes are left out here). */
export interface SourcifyV2JobError extends SourcifyV2ErrorBody {
  /** e.g. `{ compilerErrors: [...] }` for `compiler_error`. */
  errorData?: Record<string, unknown>;
}

/** `VerifiedContractMinimal`: the three match fields are null while not verified. */
export interface SourcifyV2Contract {
  match: SourcifyMatchLevel | null;
  creationMatch: SourcifyMatchLevel | null;
  runtimeMatch: SourcifyMatchLevel | null;
  /** Decimal, as a string: `"1"`. */
  chainId: string;
  /** EIP-55 checksummed. */
  address: string;
  /** `2024-07-24T12:00:00Z`: whole seconds, as Sourcify's database formats it. */
  verifiedAt?: string;
  /** A decimal string. */
  matchId?: string;
}

/** `compilation` of `GET /v2/contract/...?fields=compilation` (`VerifiedContract`). */
export interface SourcifyV2Compilation {
  language?: string;
  compiler?: string;
  /** Without a `v` prefix, e.g. `0.8.24+commit.e11b9ed9`. */
  compilerVersion?: string;
  compilerSettings?: Record<string, unknown>;
  name?: string;
  /** `path:Name`, e.g. `contracts/Greeter.sol:Greeter`. */
  fullyQualifiedName?: string;
}

/** One explorer's copy of a verification (`ApiExternalVerification`). */
export interface SourcifyV2ExternalVerification {
  verificationId?: string;
  /** The explorer's error, when its verification failed. */
  error?: string;
  statusUrl?: string;
  explorerUrl?: string;
}

/** Where Sourcify also submitted a verification (`ApiExternalVerifications`). */
export interface SourcifyV2ExternalVerifications {
  etherscan?: SourcifyV2ExternalVerification;
  blockscout?: SourcifyV2ExternalVerification;
  routescan?: SourcifyV2ExternalVerification;
}

/** `GET /v2/verify/{verificationId}`: a verification job, pending or completed. */
export interface SourcifyV2Job {
  isJobCompleted: boolean;
  /** A UUID. */
  verificationId: string;
  /** Whole seconds, `Z`: `2024-07-24T12:00:00Z`. */
  jobStartTime: string;
  /** Once completed. */
  jobFinishTime?: string;
  /** Milliseconds, as a string (`"1333"`); only when the job compiled and matched. */
  compilationTime?: string;
  /** Where a verification from source was also submitted, once it verified. */
  externalVerifications?: SourcifyV2ExternalVerifications;
  /** While pending, and after a failure, the match fields are null. */
  contract: SourcifyV2Contract;
  /** When the job failed; `isJobCompleted` is true. */
  error?: SourcifyV2JobError;
}
