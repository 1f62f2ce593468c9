import { InvalidInputError } from '../../errors/invalid-input-error.js';
import { RateLimitedError } from '../../errors/rate-limited-error.js';
import type { UpstreamEndpoint } from '../../errors/upstream-error.js';
import { UpstreamUnavailableError } from '../../errors/upstream-unavailable-error.js';
import { VerificationRejectedError } from '../../errors/verification-rejected-error.js';
import type { UpstreamResponse } from '../upstream-client.js';
import { explorerFailure } from './explorer-failure.js';
import {
  bodyAs,
  isRouteNotFound,
  retryAfterSeconds,
  statusFailure,
  upstreamMessage,
} from './upstream-answer.js';
import { WireErrorBody } from './wire.js';
import { WireV2Error } from './wire-v2.js';

/** What the gateway says of a server without APIv2 (an HTML 404 on an APIv2 route). */
const NO_APIV2 =
  'it has no such route (HTTP 404 page): the server has no APIv2, which the gateway needs for this. Point VERIFY_BASE_URL at a Sourcify server that has APIv2.';

/** The error a non-2xx APIv2 answer stands for. */
export function failureOf(response: UpstreamResponse, apiKey?: string): Error {
  const { status, text, endpoint } = response;
  const error = bodyAs(WireV2Error, text);
  if (error) return errorFor(error, status, response.headers.get('retry-after'), apiKey, endpoint);
  if (isRouteNotFound(response)) {
    return new UpstreamUnavailableError(endpoint, NO_APIV2, { status });
  }
  // Not an APIv2 error: perhaps Sourcify's generic `{ error, message }`, whose words are kept.
  const other = bodyAs(WireErrorBody, text);
  return statusFailure(response, upstreamMessage(other?.message ?? other?.error, apiKey));
}

/** The endpoint a job's own failure is reported against. */
export const jobEndpoint = (id: string): UpstreamEndpoint => ({
  upstream: 'verification service',
  method: 'GET',
  path: `/v2/verify/${id}`,
});

/**
 * Added to the service's words for `duplicate_verification_request`: the job that blocks the
 * contract may be one of the jobs Sourcify leaves "running" for hours (argotorg/sourcify#2880).
 */
const DUPLICATE_HINT =
  'The service verifies a contract once at a time and cannot cancel a job: follow the running one (verificationJob, verificationJobChanged) or check contract(chainId:, address:), and submit again once it has ended.';

/**
 * APIv2's error codes as the graph's error types, for a refused submission and for a job's own
 * failure alike; `rejected`, when given, makes the error for a code that is the service refusing or
 * failing the verification itself (a failed job passes one that keeps the job).
 */
export function errorFor(
  error: WireV2Error,
  status: number,
  retryAfter: string | null,
  apiKey: string | undefined,
  endpoint: UpstreamEndpoint,
  rejected?: (message: string) => Error,
): Error {
  const details = { errorId: error.errorId ?? undefined, upstreamCode: error.customCode };
  const said = upstreamMessage(error.message, apiKey);
  const message = said ?? `Verification failed: ${error.customCode}.`;
  switch (error.customCode) {
    case 'unsupported_chain':
      return new InvalidInputError('chainId', message, details);
    case 'invalid_parameter':
    case 'invalid_json':
      return new InvalidInputError(fieldNamedIn(message), message, details);
    case 'duplicate_verification_request':
      return new RateLimitedError(
        `${asSentence(message)} ${DUPLICATE_HINT}`,
        retryAfterSeconds(retryAfter),
        details,
      );
    case 'etherscan_limit':
    case 'too_many_requests':
      return new RateLimitedError(message, retryAfterSeconds(retryAfter), details);
    case 'etherscan_request_failed':
      return explorerFailure(said, status, apiKey, details.errorId);
    case 'internal_error':
      return new UpstreamUnavailableError(
        endpoint,
        `it failed with an internal error (internal_error): ${message}`,
        { ...details, status },
      );
    default:
      if (rejected) return rejected(message);
      return status >= 500
        ? new UpstreamUnavailableError(endpoint, message, { errorId: details.errorId, status })
        : new VerificationRejectedError(message, status, details);
  }
}

/**
 * The service's words ended as a sentence, for a sentence of the gateway's to follow: Sourcify
 * ends some without a full stop ("Contract 0x… on chain 1 is already being verified").
 */
function asSentence(text: string): string {
  const trimmed = text.trimEnd();
  return /[.!?…]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/** The input fields a validator message can name, longest first (`sources` after `stdJsonInput`). */
const INPUT_FIELDS = [
  'creationTransactionHash',
  'contractIdentifier',
  'compilerVersion',
  'stdJsonInput',
  'metadata',
  'sources',
  'address',
  'chainId',
  'apiKey',
];

function fieldNamedIn(message: string): string {
  return INPUT_FIELDS.find((field) => message.includes(field)) ?? 'input';
}
