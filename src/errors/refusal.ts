import { createGraphQLError } from 'graphql-yoga';
import { noteErrorCode } from '../observability/request-scope.js';
import type { ErrorCode } from './error-code.js';

/**
 * A request refused before any operation ran, as the GraphQL error Yoga turns into an HTTP answer
 * with `status` (thrown from a request parser or a plugin hook); `extra` adds to its extensions
 * (`limit`, naming the bound).
 */
export const refusal = (
  code: ErrorCode,
  message: string,
  status: number,
  extra: Record<string, unknown> = {},
) => createGraphQLError(message, { extensions: { ...extra, http: { status }, code } });

/**
 * The same refusal as a whole HTTP answer, for code that answers before Yoga runs an operation;
 * the code goes to the request's log line.
 */
export function refusalBody(
  code: ErrorCode,
  message: string,
  extra: Record<string, unknown> = {},
): string {
  noteErrorCode(code);
  return JSON.stringify({ errors: [{ message, extensions: { code, ...extra } }] });
}
