import { createGraphQLError } from 'graphql-yoga';
import type { ErrorCode } from './error-code.js';

/**
 * A request refused before any operation ran, as the GraphQL error Yoga turns into an HTTP answer
 * with `status` (thrown from a request parser or a plugin hook).
 */
export const refusal = (code: ErrorCode, message: string, status: number) =>
  createGraphQLError(message, { extensions: { http: { status }, code } });

/** The same refusal as a whole HTTP answer, for code that runs outside Yoga's pipeline. */
export function refusalBody(code: ErrorCode, message: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code } }] });
}
