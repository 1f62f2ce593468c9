/** Where a failed upstream call went: which upstream, and which endpoint of it. */
export interface UpstreamEndpoint {
  /** The upstream's name as clients see it, e.g. `status feed`. */
  readonly upstream: string;
  readonly method: string;
  /** The path of the endpoint below the upstream's base URL, e.g. `/summary.json`. */
  readonly path: string;
}

const describe = ({ upstream, method, path }: UpstreamEndpoint) => `${upstream} ${method} ${path}`;

/**
 * The upstream could not be reached, timed out, or answered with an error status. Safe to show
 * to clients: the message names the endpoint by its path, never the upstream's host or a secret.
 */
export class UpstreamUnavailableError extends Error {
  override readonly name = 'UpstreamUnavailableError';
  readonly code = 'UPSTREAM_UNAVAILABLE';
  readonly endpoint: UpstreamEndpoint;
  /** The HTTP status the upstream answered, when it answered at all. */
  readonly status: number | undefined;
  /** Copied by graphql-js onto the GraphQL error that wraps this one. */
  readonly extensions: { readonly code: 'UPSTREAM_UNAVAILABLE'; readonly upstream: string };

  constructor(
    endpoint: UpstreamEndpoint,
    reason: string,
    options: { status?: number; cause?: unknown } = {},
  ) {
    super(`The ${describe(endpoint)} is unavailable: ${reason}`, { cause: options.cause });
    this.endpoint = endpoint;
    this.status = options.status;
    this.extensions = { code: this.code, upstream: endpoint.upstream };
  }
}

/** The upstream answered 2xx, but with a body that is not what the endpoint serves. */
export class UpstreamBadResponseError extends Error {
  override readonly name = 'UpstreamBadResponseError';
  readonly code = 'UPSTREAM_BAD_RESPONSE';
  readonly endpoint: UpstreamEndpoint;
  /** Copied by graphql-js onto the GraphQL error that wraps this one. */
  readonly extensions: { readonly code: 'UPSTREAM_BAD_RESPONSE'; readonly upstream: string };

  constructor(endpoint: UpstreamEndpoint, reason: string, options: { cause?: unknown } = {}) {
    super(`The ${describe(endpoint)} answered an unexpected body: ${reason}`, {
      cause: options.cause,
    });
    this.endpoint = endpoint;
    this.extensions = { code: this.code, upstream: endpoint.upstream };
  }
}

export type UpstreamError = UpstreamUnavailableError | UpstreamBadResponseError;

export const isUpstreamError = (error: unknown): error is UpstreamError =>
  error instanceof UpstreamUnavailableError || error instanceof UpstreamBadResponseError;
