import type { ErrorCode } from './error-code.js';

/** The GraphQL result types an expected error is returned as (see `src/schema/errors.ts`). */
export type ErrorResultType =
  | 'InvalidInputError'
  | 'VerificationRejectedError'
  | 'RateLimitedError'
  | 'UpstreamUnavailableError';

export interface ExpectedErrorOptions {
  readonly cause?: unknown;
  /** The upstream's own id for the error, when it gave one (APIv2's `errorId`). */
  readonly errorId?: string | undefined;
}

/**
 * A way for an operation to fail that the gateway expects and can explain: bad input, an upstream
 * that failed or refused. Its message is written for the client (it never holds a host, a stack or
 * a secret), so it is never masked. Thrown from a field, it is a GraphQL error with `code` in its
 * extensions; from a field whose type is a result union, it is returned as `resultType`.
 * Anything that is not an `ExpectedError` is a bug, and clients see "Unexpected error.".
 */
export abstract class ExpectedError extends Error {
  abstract readonly code: ErrorCode;
  abstract readonly resultType: ErrorResultType;
  readonly errorId: string | null;

  constructor(message: string, options: ExpectedErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.errorId = options.errorId ?? null;
  }

  /** Copied by graphql-js onto the GraphQL error that wraps this one. */
  get extensions(): Record<string, unknown> {
    return { code: this.code };
  }
}
