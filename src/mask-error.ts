import { GraphQLError } from 'graphql';
import { type MaskError, maskError as maskUnexpectedError } from 'graphql-yoga';
import { isUpstreamError } from './upstreams/errors.js';

/**
 * Decides what clients see of an error thrown while executing. Upstream failures are expected:
 * they keep their message, which names the endpoint but never a host or a secret, and their
 * `extensions.code`; the upstream client has logged them already. Anything else is a bug: Yoga
 * logs it with its stack, and clients get "Unexpected error.".
 */
export const maskError: MaskError = (error, message, isDev) => {
  if (error instanceof GraphQLError && isUpstreamError(error.originalError)) return error;
  return maskUnexpectedError(error, message, isDev);
};
