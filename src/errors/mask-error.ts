import { GraphQLError } from 'graphql';
import { type MaskError, maskError as maskUnexpectedError } from 'graphql-yoga';
import { ExpectedError } from './expected-error.js';

/**
 * Decides what clients see of an error thrown while executing. An `ExpectedError` keeps its
 * message and `extensions.code`; the code that threw it has logged it already. Anything else is a
 * bug: Yoga logs it with its stack, and clients get "Unexpected error.".
 */
export const maskError: MaskError = (error, message, isDev) => {
  if (error instanceof GraphQLError && error.originalError instanceof ExpectedError) {
    // The client's error alone, the same object (Yoga logs any error masking replaces): Yoga counts
    // an error wrapping anything but a GraphQL error as unexpected, and answers 500 when no data
    // comes with it (a subscription refused for its arguments), where the error is the client's.
    Object.defineProperty(error, 'originalError', { value: undefined });
    return error;
  }
  return maskUnexpectedError(error, message, isDev);
};
