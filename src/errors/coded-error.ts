import { GraphQLError, type GraphQLErrorOptions } from 'graphql';
import type { ErrorCode } from './error-code.js';

/**
 * What an error's `extensions` say besides its code (`limit`, `field`, `http`…). Never a `code`
 * of their own: the code is the registry's, given apart (`codedError`, `codedExtensions`).
 */
export type ExtraExtensions = { readonly [name: string]: unknown; readonly code?: never };

/** The `extensions` of an error the gateway answers: a code of the registry, then the rest. */
export type CodedExtensions = { readonly [name: string]: unknown; readonly code: ErrorCode };

/**
 * The one way to write an `extensions.code`: `code` is typed by the registry (`ERROR_CODES`), so
 * a code that is not in it fails typecheck, and a code written as a literal anywhere else fails
 * test/architecture/error-codes.test.ts. The code comes first, as clients read it.
 */
export const codedExtensions = (code: ErrorCode, extra?: ExtraExtensions): CodedExtensions => ({
  code,
  ...extra,
});

/** A GraphQL error with its code from the registry, and what else `options.extensions` say. */
export function codedError(
  code: ErrorCode,
  message: string,
  options: Omit<GraphQLErrorOptions, 'extensions'> & { readonly extensions?: ExtraExtensions } = {},
): GraphQLError {
  return new GraphQLError(message, {
    ...options,
    extensions: codedExtensions(code, options.extensions),
  });
}
