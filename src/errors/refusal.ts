import type { GraphQLError } from 'graphql';
import { noteErrorCode } from '../observability/request-scope.js';
import {
  type CodedExtensions,
  codedError,
  codedExtensions,
  type ExtraExtensions,
} from './coded-error.js';
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
  extra: ExtraExtensions = {},
): GraphQLError => codedError(code, message, { extensions: { ...extra, http: { status } } });

/**
 * The same refusal as a whole HTTP answer, for code that answers before Yoga runs an operation;
 * the code goes to the request's log line.
 */
export function refusalBody(code: ErrorCode, message: string, extra?: ExtraExtensions): string {
  noteErrorCode(code);
  return JSON.stringify({ errors: [{ message, extensions: codedExtensions(code, extra) }] });
}

/** A refusal answered on a bare socket, before any request object exists (`writeRawRefusal`). */
export interface RawRefusal {
  readonly status: number;
  readonly error: { readonly message: string; readonly extensions: CodedExtensions };
  /** Seconds the client should wait before it tries again (`Retry-After`), when it should. */
  readonly retryAfterSeconds?: number;
}

/** A refusal on a bare socket with `status`, `code` and `message`, and what else it says. */
export const rawRefusal = (
  status: number,
  code: ErrorCode,
  message: string,
  {
    extensions,
    retryAfterSeconds,
  }: { extensions?: ExtraExtensions; retryAfterSeconds?: number } = {},
): RawRefusal => ({
  status,
  error: { message, extensions: codedExtensions(code, extensions) },
  ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
});

/**
 * How long a client refused because the gateway is shutting down waits before it retries. By
 * then this replica has stopped listening and its `/readiness` has answered 503 since the signal,
 * so the retry reaches another one; a client should not wait longer for that.
 */
const SHUTTING_DOWN_RETRY_AFTER_SECONDS = 1;

/**
 * The refusal of a WebSocket handshake that arrives while the gateway shuts down (the server
 * draining, or its sockets closing): 503 `SHUTTING_DOWN`, with `Retry-After`.
 */
export const shuttingDown: RawRefusal = rawRefusal(
  503,
  'SHUTTING_DOWN',
  'The gateway is shutting down. Retry: another replica will answer.',
  { retryAfterSeconds: SHUTTING_DOWN_RETRY_AFTER_SECONDS },
);
