import { randomUUID } from 'node:crypto';

/** An incoming id is reused only if it cannot smuggle anything into logs or headers. */
const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * The id of a request, in logs, in the `x-request-id` answer header and upstream: the caller's
 * `x-request-id` when it sends a safe one, a new UUID otherwise.
 */
export function requestIdOf(header: string | string[] | null | undefined): string {
  return typeof header === 'string' && SAFE_REQUEST_ID.test(header) ? header : randomUUID();
}
