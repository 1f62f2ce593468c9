import { ExpectedError, type ExpectedErrorOptions } from './expected-error.js';

/** The verification service, or the explorer behind it, asked the caller to slow down. */
export class RateLimitedError extends ExpectedError {
  override readonly name = 'RateLimitedError';
  readonly code = 'RATE_LIMITED';
  readonly resultType = 'RateLimitedError';
  /** Seconds to wait before trying again, when the service said. */
  readonly retryAfterSeconds: number | null;

  constructor(
    message: string,
    retryAfterSeconds: number | null,
    options: ExpectedErrorOptions = {},
  ) {
    super(message, options);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
