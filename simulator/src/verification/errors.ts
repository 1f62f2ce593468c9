import { jsonResponse } from '../json-response.js';
import type { SimulatorResponse } from '../upstream.js';
import type { SourcifyErrorBody, SourcifyValidationErrorBody } from './types.js';

/** Sourcify's own wording, for the answers the simulator gives and for tests to expect. */
export const SOURCIFY_MESSAGES = {
  notVerifiedOnEtherscan: 'This contract is not verified on Etherscan',
  etherscanRateLimited: 'Etherscan API rate limit reached, try later',
  noNewFile: "The contract didn't add any new file",
  chainNotSupported: (chainId: string) => `Chain ${chainId} not supported for verification!`,
  chainWithoutEtherscan: (chainId: string | number) =>
    `Requested chain ${chainId} is not supported for importing from Etherscan`,
  invalidAddress: (address: string) => `Invalid address: ${address}`,
} as const;

/** The body of Sourcify's error handler for an error with a message. */
export function sourcifyErrorBody(message: string): SourcifyErrorBody {
  return { error: message, message };
}

/** An error answered by Sourcify's error handler: `{ error, message }`. */
export function sourcifyError(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): SimulatorResponse {
  return jsonResponse(status, sourcifyErrorBody(message), headers);
}

/** An answer of the OpenAPI request validator (before any session is opened): `{ message, errors }`. */
export function validatorError(
  status: number,
  message: string,
  errors: SourcifyValidationErrorBody['errors'],
): SimulatorResponse {
  const body: SourcifyValidationErrorBody = { message, errors };
  return jsonResponse(status, body);
}

/** A request body that does not match the schema. */
export interface SchemaIssue {
  /** Where the issue is reported: `/body/address`, or `/body` for the body as a whole. */
  readonly path: string;
  /** Where the message says it is: the parent object for a missing property. */
  readonly instancePath: string;
  /** e.g. `must be string`. */
  readonly message: string;
  /** e.g. `type.openapi.validation`. */
  readonly errorCode: string;
}

/** 400 for a body that does not match the schema, every issue listed. */
export function schemaError(issues: readonly SchemaIssue[]): SimulatorResponse {
  return validatorError(
    400,
    issues.map((issue) => `request${issue.instancePath} ${issue.message}`).join(', '),
    issues.map(({ path, message, errorCode }) => ({ path, message, errorCode })),
  );
}
