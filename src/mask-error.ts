import { GraphQLError } from 'graphql';
import { type MaskError, maskError as maskUnexpectedError } from 'graphql-yoga';
import { isUpstreamError } from './upstreams/errors.js';
import { InvalidInputError } from './upstreams/verification/errors.js';

/**
 * Decides what clients see of an error thrown while executing. Upstream failures and invalid
 * input are expected: they keep their message, which names the endpoint or the field but never a
 * host or a secret, and their `extensions.code`; the upstream client has logged failures already. Anything else is a bug: Yoga
 * logs it with its stack, and clients get "Unexpected error.".
 */
export const maskError: MaskError = (error, message, isDev) => {
  if (
    error instanceof GraphQLError &&
    (isUpstreamError(error.originalError) || error.originalError instanceof InvalidInputError)
  ) {
    return error;
  }
  return maskUnexpectedError(error, message, isDev);
};
