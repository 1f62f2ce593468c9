import type { ObjectFieldsShape } from '@pothos/core';
import { type ErrorResultType, ExpectedError } from '../errors/expected-error.js';
import type { VerificationJob } from '../upstreams/verification/model.js';
import { builder } from './builder.js';

/*
 * Expected failures as members of a field's result union. The services throw error classes; at
 * this boundary they become plain result objects (graphql-js would treat a returned `Error` as a
 * field error). Unexpected errors stay GraphQL errors.
 */

type ErrorResultOf<Name extends ErrorResultType, Fields = unknown> = {
  readonly __typename: Name;
  readonly message: string;
  readonly errorId: string | null;
} & Fields;

type ErrorResult =
  | ErrorResultOf<'InvalidInputError', { field: string; maxBytes?: number }>
  | ErrorResultOf<
      'VerificationRejectedError',
      { status: number; upstreamCode: string | null; job?: VerificationJob }
    >
  | ErrorResultOf<'RateLimitedError', { retryAfterSeconds: number | null }>
  | ErrorResultOf<'UpstreamUnavailableError'>;

const ErrorInterface = builder.interfaceRef<ErrorResult>('Error').implement({
  description:
    'An expected way for an operation to fail, returned as its result. Query `message` to show the user; switch on `__typename` to react.',
  fields: (t) => ({
    message: t.exposeString('message', {
      description: 'What went wrong, in a sentence that can be shown to the user.',
    }),
  }),
});

/** The object type of the result `name`: its own `fields`, then the `errorId` every one has. */
function errorType<Name extends ErrorResultType>(
  name: Name,
  description: string,
  fields: ObjectFieldsShape<
    typeof builder.$inferSchemaTypes,
    Extract<ErrorResult, { __typename: Name }>
  > = () => ({}),
) {
  return builder.objectRef<Extract<ErrorResult, { __typename: Name }>>(name).implement({
    description,
    interfaces: [ErrorInterface],
    fields: (t) => ({
      ...fields(t),
      errorId: t.string({
        nullable: true,
        description:
          "The verification service's id for this error (APIv2 `errorId`), to quote in a support request; null when it gave none.",
        resolve: (error) => error.errorId,
      }),
    }),
  });
}

export const InvalidInputErrorRef = errorType(
  'InvalidInputError',
  "The input was refused, before anything was sent upstream or by the service's own checks.",
  (t) => ({
    field: t.exposeString('field', {
      description: 'The input field at fault, e.g. `address`: highlight it in the form.',
    }),
  }),
);

builder.objectField(InvalidInputErrorRef, 'maxBytes', (t) =>
  t.exposeInt('maxBytes', {
    nullable: true,
    description:
      'The size limit the input went past, in bytes (`VERIFY_MAX_SOURCE_BYTES`); null when it was refused for something else.',
  }),
);

export const VerificationRejectedErrorRef = errorType(
  'VerificationRejectedError',
  "The verification service refused the request or the verification failed: the contract is not verified on the explorer, the session already holds it, the compiled bytecode does not match. `message` is the service's own explanation.",
  (t) => ({
    status: t.exposeInt('status', {
      description:
        'The HTTP status the verification service answered, e.g. 404; 422 for an APIv2 job that ran and failed.',
    }),
    code: t.exposeString('upstreamCode', {
      nullable: true,
      description:
        "The service's machine-readable reason (APIv2 `customCode`), e.g. `no_match`; null with the session API.",
    }),
  }),
);

export const RateLimitedErrorRef = errorType(
  'RateLimitedError',
  'The verification service, or the block explorer behind it, is limiting requests. Try again later.',
  (t) => ({
    retryAfterSeconds: t.exposeInt('retryAfterSeconds', {
      nullable: true,
      description: 'Seconds to wait before trying again; null when the service did not say.',
    }),
  }),
);

export const UpstreamUnavailableErrorRef = errorType(
  'UpstreamUnavailableError',
  'The verification service could not be reached, failed, timed out, or answered something unusable. Nothing suggests the request itself was wrong: try again later.',
);

/**
 * Resolves to the outcome of `work`, or to the result object of the expected error it failed with:
 * its own fields under its `resultType` (every `ExpectedError` has one, so a new expected error
 * needs no change here).
 */
export async function settle<Value>(work: Promise<Value>): Promise<Value | ErrorResult> {
  try {
    return await work;
  } catch (error) {
    if (!(error instanceof ExpectedError)) throw error;
    return { ...error, __typename: error.resultType, message: error.message } as ErrorResult;
  }
}
