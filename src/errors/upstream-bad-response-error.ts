import type { ExpectedErrorOptions } from './expected-error.js';
import { type UpstreamEndpoint, UpstreamError } from './upstream-error.js';

/** The upstream answered 2xx, but with a body that is not what the endpoint serves. */
export class UpstreamBadResponseError extends UpstreamError {
  override readonly name = 'UpstreamBadResponseError';
  readonly code = 'UPSTREAM_BAD_RESPONSE';

  constructor(endpoint: UpstreamEndpoint, reason: string, options: ExpectedErrorOptions = {}) {
    super(endpoint, `answered an unexpected body: ${reason}`, options);
  }
}
