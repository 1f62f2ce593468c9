import { ExpectedError, type ExpectedErrorOptions } from './expected-error.js';

/**
 * The verification service works, but the block explorer it imports sources from (Etherscan)
 * could not be reached or failed, and the service said so in its own answer (Sourcify's 502). It
 * is reported like an unavailable upstream, but it is not the service failing: it never counts
 * toward the service's circuit breaker.
 */
export class ExplorerUnavailableError extends ExpectedError {
  override readonly name = 'ExplorerUnavailableError';
  readonly code = 'UPSTREAM_UNAVAILABLE';
  readonly resultType = 'UpstreamUnavailableError';
  /** The HTTP status the verification service answered, e.g. 502. */
  readonly status: number;

  /** `reason` is the service's own explanation, e.g. "Network error while connecting to Etherscan API." */
  constructor(reason: string, status: number, options: ExpectedErrorOptions = {}) {
    super(
      `The verification service could not get the sources from the block explorer: ${reason}`,
      options,
    );
    this.status = status;
  }

  override get extensions() {
    return { code: this.code, upstream: 'block explorer' };
  }
}
