/**
 * Outcomes of a verification that are answers, not failures of the gateway: the schema turns each
 * into a member of the `VerifyContractResult` union.
 */

/** The input was refused before anything was sent upstream. */
export class InvalidInputError extends Error {
  override readonly name = 'InvalidInputError';
  /** The input field at fault, as named in `VerifyContractInput`. */
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** The verification service refused the request (a 4xx other than 429). */
export class VerificationRejectedError extends Error {
  override readonly name = 'VerificationRejectedError';
  /** The HTTP status the service answered. */
  readonly status: number;

  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/** The verification service, or the explorer behind it, asked the caller to slow down. */
export class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  /** Seconds to wait before trying again, when the service said. */
  readonly retryAfterSeconds: number | null;

  constructor(message: string, retryAfterSeconds: number | null) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
