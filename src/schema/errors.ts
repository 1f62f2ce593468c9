import { type ExpectedError, isExpectedError } from '../errors/expected-error.js';
import { builder } from './builder.js';

/*
 * Expected failures as members of a field's result union. The services throw error classes; at
 * this boundary they become plain result objects (graphql-js would treat a returned `Error` as a
 * field error). Unexpected errors stay GraphQL errors.
 */

type ErrorResultOf<Name extends string, Fields> = {
  readonly __typename: Name;
  readonly message: string;
} & Fields;

type InvalidInputResult = ErrorResultOf<
  'InvalidInputError',
  { field: string; errorId: string | null }
>;
type RejectedResult = ErrorResultOf<
  'VerificationRejectedError',
  { status: number; upstreamCode: string | null; errorId: string | null }
>;
type RateLimitedResult = ErrorResultOf<
  'RateLimitedError',
  { retryAfterSeconds: number | null; errorId: string | null }
>;
type UnavailableResult = ErrorResultOf<'UpstreamUnavailableError', { errorId: string | null }>;

export type ErrorResult =
  | InvalidInputResult
  | RejectedResult
  | RateLimitedResult
  | UnavailableResult;

export const ErrorInterface = builder.interfaceRef<ErrorResult>('Error').implement({
  description:
    'An expected way for an operation to fail, returned as its result. Query `message` to show the user; switch on `__typename` to react.',
  fields: (t) => ({
    message: t.exposeString('message', {
      description: 'What went wrong, in a sentence that can be shown to the user.',
    }),
  }),
});

const errorIdField = {
  nullable: true,
  description:
    "The verification service's id for this error (APIv2 `errorId`), to quote in a support request; null when it gave none.",
} as const;

export const InvalidInputErrorRef = builder
  .objectRef<InvalidInputResult>('InvalidInputError')
  .implement({
    description:
      "The input was refused, before anything was sent upstream or by the service's own checks.",
    interfaces: [ErrorInterface],
    fields: (t) => ({
      field: t.exposeString('field', {
        description: 'The input field at fault, e.g. `address`: highlight it in the form.',
      }),
      errorId: t.exposeString('errorId', errorIdField),
    }),
  });

export const VerificationRejectedErrorRef = builder
  .objectRef<RejectedResult>('VerificationRejectedError')
  .implement({
    description:
      "The verification service refused the request or the verification failed: the contract is not verified on the explorer, the session already holds it, the compiled bytecode does not match. `message` is the service's own explanation.",
    interfaces: [ErrorInterface],
    fields: (t) => ({
      status: t.exposeInt('status', {
        description:
          'The HTTP status the verification service answered, e.g. 404; 422 for an APIv2 job that ran and failed.',
      }),
      code: t.exposeString('upstreamCode', {
        nullable: true,
        description:
          "The service's machine-readable reason (APIv2 `customCode`), e.g. `no_match`; null with the session API.",
      }),
      errorId: t.exposeString('errorId', errorIdField),
    }),
  });

export const RateLimitedErrorRef = builder
  .objectRef<RateLimitedResult>('RateLimitedError')
  .implement({
    description:
      'The verification service, or the block explorer behind it, is limiting requests. Try again later.',
    interfaces: [ErrorInterface],
    fields: (t) => ({
      retryAfterSeconds: t.exposeInt('retryAfterSeconds', {
        nullable: true,
        description: 'Seconds to wait before trying again; null when the service did not say.',
      }),
      errorId: t.exposeString('errorId', errorIdField),
    }),
  });

export const UpstreamUnavailableErrorRef = builder
  .objectRef<UnavailableResult>('UpstreamUnavailableError')
  .implement({
    description:
      'The verification service could not be reached, failed, timed out, or answered something unusable. Nothing suggests the request itself was wrong: try again later.',
    interfaces: [ErrorInterface],
    fields: (t) => ({
      errorId: t.exposeString('errorId', errorIdField),
    }),
  });

/**
 * The result object for an expected error: its own fields under its `resultType`. Every
 * `ExpectedError` has one, so a new expected error needs no change here.
 */
function toErrorResult(error: ExpectedError): ErrorResult {
  return { ...error, __typename: error.resultType, message: error.message } as ErrorResult;
}

/** Resolves to the outcome of `work`, or to the result object of the expected error it failed with. */
export async function settle<Value>(work: Promise<Value>): Promise<Value | ErrorResult> {
  try {
    return await work;
  } catch (error) {
    if (isExpectedError(error)) return toErrorResult(error);
    throw error;
  }
}

/** The GraphQL type name of an error result, for a union's `resolveType`. */
export function errorTypeName(value: unknown): ErrorResult['__typename'] | undefined {
  return typeof value === 'object' && value !== null && '__typename' in value
    ? (value as ErrorResult).__typename
    : undefined;
}
