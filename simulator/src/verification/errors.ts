import { jsonResponse } from '../json-response.js';
import type { SimulatorResponse } from '../upstream.js';
import type { SourcifyErrorBody, SourcifyValidationErrorBody } from './types.js';

/**
 * lib-sourcify's words for what happened at Etherscan (`EtherscanImportError`), shared by the
 * session API and APIv2; each ends with a full stop.
 */
export const ETHERSCAN_MESSAGES = {
  notVerifiedOnEtherscan: 'This contract is not verified on Etherscan.',
  chainWithoutEtherscan: (chainId: string | number) =>
    `Requested chain ${chainId} is not supported for importing from Etherscan.`,
  /** `etherscan_network_error`: Etherscan could not be reached. */
  etherscanNetworkError: 'Network error while connecting to Etherscan API.',
  /** `etherscan_http_error`: Etherscan answered an HTTP error status. */
  etherscanHttpError: (status: number) => `Etherscan API returned HTTP ${status} error.`,
  /** `etherscan_api_error`: Etherscan answered `NOTOK`, here for a key it does not accept. */
  etherscanInvalidApiKey: 'Error in Etherscan API response. Result message: Invalid API Key',
  /** `etherscan_rate_limit`. */
  etherscanRateLimited: 'Etherscan API rate limit reached, try later.',
} as const;

/** Sourcify's own wording, for the answers the simulator gives and for tests to expect. */
export const SOURCIFY_MESSAGES = {
  noNewFile: "The contract didn't add any new file",
  chainNotSupported: (chainId: string) => `Chain ${chainId} not supported for verification!`,
  invalidAddress: (address: string) => `Invalid address: ${address}`,
  ...ETHERSCAN_MESSAGES,
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

/**
 * 400 for a body that does not match the schema. The validator's ajv stops at the first issue
 * (`allErrors: false`), so only that one is reported.
 */
export function schemaError(issue: SchemaIssue): SimulatorResponse {
  const { path, message, errorCode, instancePath } = issue;
  return validatorError(400, `request${instancePath} ${message}`, [{ path, message, errorCode }]);
}

/**
 * Express's answer for a request no route takes (finalhandler): an HTML page, not JSON, without
 * a session cookie. `path` is the path as the server saw it.
 */
export function expressNotFound(method: string, path: string): SimulatorResponse {
  const body = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Error</title>
</head>
<body>
<pre>Cannot ${escapeHtml(method)} ${escapeHtml(path)}</pre>
</body>
</html>
`;
  return {
    status: 404,
    headers: {
      'content-security-policy': "default-src 'none'",
      'x-content-type-options': 'nosniff',
      'content-type': 'text/html; charset=utf-8',
    },
    body: Buffer.from(body),
  };
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** As the `escape-html` package finalhandler uses does it. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}
