import { ExpectedError, type ExpectedErrorOptions } from './expected-error.js';

/** The verification service refused the request, or the verification failed. */
export class VerificationRejectedError extends ExpectedError {
  override readonly name = 'VerificationRejectedError';
  readonly code = 'VERIFICATION_REJECTED';
  readonly resultType = 'VerificationRejectedError';
  /** The HTTP status the service answered (422 for a failed APIv2 job). */
  readonly status: number;
  /** The service's machine-readable reason (APIv2's `customCode`), e.g. `not_etherscan_verified`. */
  readonly upstreamCode: string | null;

  constructor(
    message: string,
    status: number,
    options: ExpectedErrorOptions & { upstreamCode?: string | undefined } = {},
  ) {
    super(message, options);
    this.status = status;
    this.upstreamCode = options.upstreamCode ?? null;
  }
}
