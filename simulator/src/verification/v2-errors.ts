import { randomUUID } from 'node:crypto';
import { jsonResponse } from '../json-response.js';
import type { SimulatorResponse } from '../upstream.js';
import { ETHERSCAN_MESSAGES } from './errors.js';
import type { SourcifyV2ErrorBody } from './types.js';

/*
 * APIv2 errors as Sourcify's server words them (services/server/src/server/apiv2/errors.ts,
 * middlewares.ts, services/utils/etherscan-util.ts; lib-sourcify's SourcifyLibError.ts).
 */

/** Answered synchronously by `POST /v2/verify/etherscan/{chainId}/{address}`, with its status. */
export const V2_REJECTION_STATUS = {
  /**
   * An unknown chain, or one Sourcify cannot import from Etherscan for: 400 on sourcify-server
   * 3.12.1, 404 on 3.9.1 (see `unsupportedChainStatus`).
   */
  unsupported_chain: 400,
  /** Both runtime and creation bytecode already have an exact match. */
  already_verified: 409,
  /** A job for the same chain and address is still pending. */
  duplicate_verification_request: 429,
  /** Etherscan has no verified sources for the address. */
  not_etherscan_verified: 404,
  /** Etherscan's rate limit for the API key. */
  etherscan_limit: 429,
  /** Network or HTTP error talking to Etherscan, or an error in its answer (bad API key). */
  etherscan_request_failed: 502,
  internal_error: 500,
  /** Similarity: the service's RPC failed reading the deployed bytecode. */
  failed_to_get_bytecode: 502,
  /** Similarity: there is no bytecode at the address (ContractNotDeployedError). */
  cannot_fetch_bytecode: 404,
} as const;

export type V2RejectCode = keyof typeof V2_REJECTION_STATUS;

/** Codes a job can fail with (`error.customCode`); the job still answers 200. */
export const V2_JOB_ERROR_CODES = [
  'compiler_error',
  'no_match',
  'extra_file_input_bug',
  'already_verified',
  'cannot_fetch_bytecode',
  'contract_not_deployed',
  'internal_error',
  'missing_source',
  'invalid_compilation_target',
  'contract_not_found_in_compiler_output',
  // The job reaper and the compiler's limits (argotorg/sourcify#2886).
  'compiler_timeout',
  'compiler_out_of_memory',
  'job_abandoned',
  // A similarity job that found no candidate (sourcify#2481).
  'no_similar_match_found',
] as const;

export type V2JobErrorCode = (typeof V2_JOB_ERROR_CODES)[number];

export const SOURCIFY_V2_MESSAGES = {
  ...ETHERSCAN_MESSAGES,
  chainNotFound: (chainId: string) => `Chain ${chainId} not found`,
  invalidAddress: (address: string) => `Invalid address: ${address}`,
  alreadyVerified: (address: string, chainId: string) =>
    `Contract ${address} on chain ${chainId} is already verified with runtimeMatch and creationMatch both being exact matches.`,
  beingVerified: (address: string, chainId: string) =>
    `Contract ${address} on chain ${chainId} is already being verified`,
  internalError: 'The server encountered an unexpected error.',
  jobNotFound: (verificationId: string) => `No verification job found for id ${verificationId}`,
  unsupportedMediaType: (type: string | undefined) => `unsupported media type ${type}`,
  fieldsAndOmit: 'Cannot specify both fields and omit',
  allWithOtherFields: "Cannot specify 'all' with other fields",
  tooDeepField: (field: string) =>
    `Field selector cannot have more than one level subselectors: ${field}`,
  unknownField: (field: string) => `Field selector ${field} is not a valid field`,
  // Job errors (getVerificationErrorMessage).
  jobAlreadyVerified: "The contract is already verified and the job didn't yield a better match.",
  noMatch: "The deployed and recompiled bytecode don't match.",
  compilerError: (errors: unknown) => `Compiler error. ${JSON.stringify(errors)}`,
  extraFileInputBug:
    "It seems your contract's metadata hashes match but not the bytecodes. If you are verifying via metadata.json, use the original full standard JSON input file that has all files including those not needed by this contract. See the issue for more information: https://github.com/argotorg/sourcify/issues/618",
  cannotFetchBytecode: (chainId: string, address: string) =>
    `Cannot fetch bytecode for chain #${chainId} and address ${address}.`,
  contractNotDeployed: (chainId: string, address: string) =>
    `Chain #${chainId} does not have a contract deployed at ${address}.`,
  missingSource: (paths: readonly string[]) =>
    `One or more sources are mentioned in the metadata but are not provided or could not be fetched. Missing sources: ${paths.join(', ')}`,
  invalidCompilationTarget: (targets: readonly string[]) =>
    `More than one compilationTarget in the metadata, or the compilationTarget is invalid. compilationTarget: ${targets.join(', ')}`,
  contractNotFoundInCompilerOutput: 'Contract not found in compiler output.',
  // Similarity (VerificationService.verifyFromSimilarityViaWorker, getVerificationErrorMessage).
  noSimilarMatchFound: 'No similar verified contracts were found in the database.',
  failedToGetBytecode: (chainId: string, address: string) =>
    `Failed to get bytecode for chain ${chainId} and address ${address}.`,
  noBytecode: (chainId: string, address: string) =>
    `There is no bytecode at address ${address} on chain ${chainId}.`,
  // The simulator's wording: argotorg/sourcify#2886 names these codes, not their messages.
  compilerTimeout: 'The compiler did not finish within the time limit.',
  compilerOutOfMemory: 'The compiler ran out of memory.',
  jobAbandoned: 'The verification job was abandoned: it ran too long without finishing.',
  // Request validator (express-openapi-validator, ajv's wording).
  requiredProperty: (property: string) => `request/body must have required property '${property}'`,
  mustBeObject: (where: string) => `${where} must be object`,
  mustBeString: (where: string) => `${where} must be string`,
  mustMatchPattern: (where: string, pattern: string) => `${where} must match pattern "${pattern}"`,
} as const;

/** The message Sourcify gives a rejection when nothing more specific applies. */
export function defaultRejectionMessage(code: V2RejectCode, chainId: string, address: string) {
  switch (code) {
    case 'unsupported_chain':
      return SOURCIFY_V2_MESSAGES.chainNotFound(chainId);
    case 'already_verified':
      return SOURCIFY_V2_MESSAGES.alreadyVerified(address, chainId);
    case 'duplicate_verification_request':
      return SOURCIFY_V2_MESSAGES.beingVerified(address, chainId);
    case 'not_etherscan_verified':
      return SOURCIFY_V2_MESSAGES.notVerifiedOnEtherscan;
    case 'etherscan_limit':
      return SOURCIFY_V2_MESSAGES.etherscanRateLimited;
    case 'etherscan_request_failed':
      return SOURCIFY_V2_MESSAGES.etherscanNetworkError;
    case 'internal_error':
      return SOURCIFY_V2_MESSAGES.internalError;
    case 'failed_to_get_bytecode':
      return SOURCIFY_V2_MESSAGES.failedToGetBytecode(chainId, address);
    case 'cannot_fetch_bytecode':
      return SOURCIFY_V2_MESSAGES.noBytecode(chainId, address);
  }
}

/** `{ customCode, message, errorId }` with a fresh errorId. */
export function v2ErrorBody(customCode: string, message: string): SourcifyV2ErrorBody {
  return { customCode, message, errorId: randomUUID() };
}

/** An APIv2 error answer. */
export function v2Error(status: number, customCode: string, message: string): SimulatorResponse {
  return jsonResponse(status, v2ErrorBody(customCode, message));
}

/** The errors solc gives for imports it cannot find, as Sourcify reports compiler errors. */
export function missingImportErrors(paths: readonly string[]): Array<Record<string, unknown>> {
  return paths.map((path) => ({
    component: 'general',
    errorCode: '6275',
    formattedMessage: `ParserError: Source "${path}" not found: File not found.\n`,
    message: `Source "${path}" not found: File not found.`,
    severity: 'error',
    type: 'ParserError',
  }));
}
