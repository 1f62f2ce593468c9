import { ExpectedError, type ExpectedErrorOptions } from './expected-error.js';

/** Where a failed upstream call went: which upstream, and which endpoint of it. */
export interface UpstreamEndpoint {
  /** The upstream's name as clients see it, e.g. `status feed`. */
  readonly upstream: string;
  readonly method: string;
  /** The path of the endpoint below the upstream's base URL, e.g. `/summary.json`. */
  readonly path: string;
}

/**
 * An upstream failed to give a usable answer. The message names the endpoint by its path, never
 * the upstream's host or anything the caller sent.
 */
export abstract class UpstreamError extends ExpectedError {
  abstract override readonly code: 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_BAD_RESPONSE';
  readonly resultType = 'UpstreamUnavailableError';
  readonly endpoint: UpstreamEndpoint;

  /** `what` follows the endpoint's name: "The status feed GET /summary.json is unavailable: …". */
  constructor(endpoint: UpstreamEndpoint, what: string, options: ExpectedErrorOptions = {}) {
    super(`The ${endpoint.upstream} ${endpoint.method} ${endpoint.path} ${what}`, options);
    this.endpoint = endpoint;
  }

  override get extensions() {
    return { code: this.code, upstream: this.endpoint.upstream };
  }
}
