/**
 * Outcomes of a verification that are answers, not failures of the gateway: the schema turns each
 * into a member of the `VerifyContractResult` union.
 */

export interface UpstreamErrorDetails {
  /** The upstream's id for this error (APIv2's `errorId`), to quote in a support request. */
  readonly errorId?: string | undefined;
  /** The upstream's machine-readable code (APIv2's `customCode`), e.g. `not_etherscan_verified`. */
  readonly code?: string | undefined;
}

/** The input was refused, before anything was sent upstream or by the upstream's own checks. */
export class InvalidInputError extends Error {
  override readonly name = 'InvalidInputError';
  /** The input field at fault, as named in `VerifyContractInput`. */
  readonly field: string;
  readonly errorId: string | null;

  constructor(field: string, message: string, details: UpstreamErrorDetails = {}) {
    super(message);
    this.field = field;
    this.errorId = details.errorId ?? null;
  }

  /** Copied by graphql-js onto the GraphQL error when this is thrown from a query field. */
  get extensions() {
    return { code: 'BAD_USER_INPUT', field: this.field };
  }
}

/** The verification service refused the request, or the verification failed. */
export class VerificationRejectedError extends Error {
  override readonly name = 'VerificationRejectedError';
  /** The HTTP status the service answered (422 for a failed APIv2 job). */
  readonly status: number;
  readonly code: string | null;
  readonly errorId: string | null;

  constructor(message: string, status: number, details: UpstreamErrorDetails = {}) {
    super(message);
    this.status = status;
    this.code = details.code ?? null;
    this.errorId = details.errorId ?? null;
  }
}

/** The verification service, or the explorer behind it, asked the caller to slow down. */
export class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  /** Seconds to wait before trying again, when the service said. */
  readonly retryAfterSeconds: number | null;
  readonly errorId: string | null;

  constructor(
    message: string,
    retryAfterSeconds: number | null,
    details: UpstreamErrorDetails = {},
  ) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
    this.errorId = details.errorId ?? null;
  }
}
