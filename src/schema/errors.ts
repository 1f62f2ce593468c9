import { UpstreamError } from '../upstreams/errors.js';
import {
  InvalidInputError,
  RateLimitedError,
  VerificationRejectedError,
} from '../upstreams/verification/errors.js';
import { builder } from './builder.js';

/**
 * Expected failures that are part of a field's result, as members of its result union. Unexpected
 * ones stay GraphQL errors.
 */
export const ErrorInterface = builder.interfaceRef<Error>('Error').implement({
  description:
    'An expected way for an operation to fail, returned as its result. Query `message` to show the user; switch on `__typename` to react.',
  fields: (t) => ({
    message: t.exposeString('message', {
      description: 'What went wrong, in a sentence that can be shown to the user.',
    }),
  }),
});

builder.objectType(InvalidInputError, {
  name: 'InvalidInputError',
  description: 'The input was refused before anything was sent to the verification service.',
  interfaces: [ErrorInterface],
  fields: (t) => ({
    field: t.exposeString('field', {
      description: 'The input field at fault, e.g. `address`: highlight it in the form.',
    }),
  }),
});

builder.objectType(VerificationRejectedError, {
  name: 'VerificationRejectedError',
  description:
    "The verification service refused the request: the chain is unsupported, the contract is not verified on the explorer, or the session already holds it. `message` is the service's own explanation.",
  interfaces: [ErrorInterface],
  fields: (t) => ({
    status: t.exposeInt('status', {
      description: 'The HTTP status the verification service answered, e.g. 404.',
    }),
  }),
});

builder.objectType(RateLimitedError, {
  name: 'RateLimitedError',
  description:
    'The verification service, or the block explorer behind it, is limiting requests. Try again later.',
  interfaces: [ErrorInterface],
  fields: (t) => ({
    retryAfterSeconds: t.exposeInt('retryAfterSeconds', {
      nullable: true,
      description: 'Seconds to wait before trying again; null when the service did not say.',
    }),
  }),
});

builder.objectType(UpstreamError, {
  name: 'UpstreamUnavailableError',
  description:
    'The verification service could not be reached, failed, timed out, or answered something unusable. Nothing suggests the request itself was wrong: try again later.',
  interfaces: [ErrorInterface],
  fields: () => ({}),
});

/** The error types a verification can end in, for `errors.types`. */
export const VERIFICATION_ERRORS = [
  InvalidInputError,
  VerificationRejectedError,
  RateLimitedError,
  UpstreamError,
];
