/** Where a failed upstream call went: which upstream, and which endpoint of it. */
export interface UpstreamEndpoint {
  /** The upstream's name as clients see it, e.g. `status feed`. */
  readonly upstream: string;
  readonly method: string;
  /** The path of the endpoint below the upstream's base URL, e.g. `/summary.json`. */
  readonly path: string;
}

export type UpstreamErrorCode = 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_BAD_RESPONSE';

/**
 * An upstream failed to give a usable answer. Safe to show to clients: the message names the
 * endpoint by its path, never the upstream's host or anything the caller sent.
 */
export class UpstreamError extends Error {
  override readonly name: string = 'UpstreamError';
  readonly code: UpstreamErrorCode;
  readonly endpoint: UpstreamEndpoint;
  /** The upstream's own id for the error, when it gave one (APIv2's `errorId`). */
  readonly errorId: string | null;

  constructor(
    code: UpstreamErrorCode,
    endpoint: UpstreamEndpoint,
    message: string,
    options: { cause?: unknown; errorId?: string | undefined } = {},
  ) {
    super(message, { cause: options.cause });
    this.code = code;
    this.endpoint = endpoint;
    this.errorId = options.errorId ?? null;
  }

  /** Copied by graphql-js onto the GraphQL error that wraps this one. */
  get extensions(): { code: UpstreamErrorCode; upstream: string } {
    return { code: this.code, upstream: this.endpoint.upstream };
  }
}

const describe = ({ upstream, method, path }: UpstreamEndpoint) => `${upstream} ${method} ${path}`;

/** The upstream could not be reached, timed out, or answered with an error status. */
export class UpstreamUnavailableError extends UpstreamError {
  override readonly name = 'UpstreamUnavailableError';
  /** The HTTP status the upstream answered, when it answered at all. */
  readonly status: number | undefined;

  constructor(
    endpoint: UpstreamEndpoint,
    reason: string,
    options: { status?: number; cause?: unknown; errorId?: string | undefined } = {},
  ) {
    super('UPSTREAM_UNAVAILABLE', endpoint, `The ${describe(endpoint)} is unavailable: ${reason}`, {
      cause: options.cause,
      errorId: options.errorId,
    });
    this.status = options.status;
  }
}

/** The upstream answered 2xx, but with a body that is not what the endpoint serves. */
export class UpstreamBadResponseError extends UpstreamError {
  override readonly name = 'UpstreamBadResponseError';

  constructor(endpoint: UpstreamEndpoint, reason: string, options: { cause?: unknown } = {}) {
    super(
      'UPSTREAM_BAD_RESPONSE',
      endpoint,
      `The ${describe(endpoint)} answered an unexpected body: ${reason}`,
      options,
    );
  }
}

export const isUpstreamError = (error: unknown): error is UpstreamError =>
  error instanceof UpstreamError;
