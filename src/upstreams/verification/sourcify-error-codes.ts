/**
 * Every APIv2 `customCode` the gateway knows, as its GraphQL enum value, with what it means and
 * what the user can do. A code the service adds later is `UNKNOWN` (`toEnumValue`), never an error.
 * Sources: apiv2.yaml, lib-sourcify's SourcifyLibError.ts, argotorg/sourcify#2886 (the reaper's
 * codes), services/server's apiv2/errors.ts (similarity's codes, sourcify#2481).
 */
export const SOURCIFY_ERROR_CODES = {
  // Refused submissions.
  UNSUPPORTED_CHAIN:
    'The service does not verify on this chain (`InvalidInputError` on `chainId`).',
  INVALID_PARAMETER:
    "The service's request validator refused a parameter (`InvalidInputError` naming it).",
  INVALID_JSON: 'The service could not read the request body as JSON.',
  ALREADY_VERIFIED:
    'The contract already has an exact match: nothing new was done. Answered as `VerificationResult` with `alreadyVerified: true`, on submission (409) and from a completed job alike.',
  DUPLICATE_VERIFICATION_REQUEST:
    'A job for this contract is still running, and the service verifies a contract once at a time (`RateLimitedError`). Follow the running job, or submit again once it has ended; a stuck job can block the contract for hours (see `VerificationPending.stale`).',
  NOT_ETHERSCAN_VERIFIED: 'The block explorer has no verified sources for this address.',
  ETHERSCAN_LIMIT:
    "The block explorer's rate limit for the API key was reached (`RateLimitedError`).",
  ETHERSCAN_REQUEST_FAILED:
    'The service could not get the sources from the block explorer (`UpstreamUnavailableError`, or `InvalidInputError` on `apiKey` for a rejected key).',
  TOO_MANY_REQUESTS: "The service's own rate limit (`RateLimitedError`).",
  INTERNAL_ERROR:
    'The service failed (`UpstreamUnavailableError`); quote `errorId` to its maintainers.',
  JOB_NOT_FOUND: 'The service has no job with this id.',
  FAILED_TO_GET_BYTECODE:
    "The service could not read the contract's deployed bytecode from the chain's RPC before it accepted a verification by similarity (`UpstreamUnavailableError`): try again later.",
  // Failed jobs (`VerificationRejectedError` with status 422 and the job).
  COMPILER_ERROR:
    "The compiler refused the sources; the compiler's errors are in the job's `error.errorData`.",
  NO_MATCH: "The deployed and the recompiled bytecode don't match: check the settings and sources.",
  EXTRA_FILE_INPUT_BUG:
    'The metadata hashes match but not the bytecodes: verify with the original full standard JSON input, with every file (argotorg/sourcify#618).',
  MISSING_SOURCE: 'Sources the metadata names are missing: send every source it lists.',
  MISSING_OR_INVALID_SOURCE:
    'Sources the metadata names are missing, or do not hash to what it says: send them as compiled.',
  INVALID_COMPILATION_TARGET:
    "The metadata's compilationTarget names more than one contract, or none the sources have.",
  CANNOT_FETCH_BYTECODE: "The service could not read the contract's bytecode from the chain.",
  CONTRACT_NOT_DEPLOYED: 'There is no contract at this address on this chain.',
  COMPILED_BYTECODE_IS_ZERO:
    'The compiled contract has no bytecode: an abstract contract or an interface cannot be verified.',
  BYTECODE_LENGTH_MISMATCH:
    "The recompiled bytecode's length differs from the deployed one: check the compiler version and settings.",
  NO_COMPILER_OUTPUT: 'The compiler gave no output.',
  CONTRACT_NOT_FOUND_IN_COMPILER_OUTPUT:
    "The compiler's output has no contract of that name: check `contractIdentifier`.",
  INVALID_COMPILER_VERSION: 'The service does not know this compiler version.',
  ONCHAIN_RUNTIME_BYTECODE_NOT_AVAILABLE:
    "The service could not get the contract's deployed bytecode from the chain.",
  ONCHAIN_CREATION_BYTECODE_NOT_AVAILABLE:
    "The service could not get the contract's creation bytecode: send `creationTransactionHash`.",
  COMPILER_TIMEOUT:
    "The compiler ran past the service's time limit: the same input is likely to time out again; try a simpler build (fewer sources, no viaIR) or ask the service's maintainers.",
  COMPILER_OUT_OF_MEMORY:
    "The compiler ran out of the service's memory: the same input is likely to fail again; ask the service's maintainers.",
  NO_SIMILAR_MATCH_FOUND:
    'A verification by similarity found no verified contract whose bytecode resembles this one, or none whose sources match it: verify from source instead.',
  JOB_ABANDONED:
    'The service gave the job up after it ran too long (it was stuck): nothing was verified, and the contract can be submitted again now.',
} as const;

export type SourcifyErrorCode = keyof typeof SOURCIFY_ERROR_CODES;
