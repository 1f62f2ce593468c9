import type { ExpectedErrorOptions } from './expected-error.js';
import { type UpstreamEndpoint, UpstreamError } from './upstream-error.js';

/** The upstream could not be reached, timed out, or answered with an error status. */
export class UpstreamUnavailableError extends UpstreamError {
  override readonly name = 'UpstreamUnavailableError';
  readonly code = 'UPSTREAM_UNAVAILABLE';
  /** The HTTP status the upstream answered, when it answered at all. */
  readonly status: number | undefined;
  /** What went wrong, as the message ends: e.g. `the connection failed`. */
  readonly reason: string;

  constructor(
    endpoint: UpstreamEndpoint,
    reason: string,
    options: ExpectedErrorOptions & { status?: number } = {},
  ) {
    super(endpoint, `is unavailable: ${reason}`, options);
    this.status = options.status;
    this.reason = reason;
  }
}
