import type { z } from 'zod';
import { RateLimitedError } from '../../errors/rate-limited-error.js';
import { UpstreamUnavailableError } from '../../errors/upstream-unavailable-error.js';
import { VerificationRejectedError } from '../../errors/verification-rejected-error.js';
import type { UpstreamResponse } from '../upstream-client.js';

const LONGEST_MESSAGE = 500;

/**
 * The upstream's own explanation, fit to show a user: trimmed, bounded, and with any echo of an
 * API key cut out (the key goes upstream and nowhere else; see `scrubApiKey`).
 */
export function upstreamMessage(
  message: string | null | undefined,
  apiKey: string | undefined,
): string | undefined {
  if (!message?.trim()) return undefined;
  const scrubbed = scrubApiKey(message, apiKey);
  return scrubbed.length > LONGEST_MESSAGE ? `${scrubbed.slice(0, LONGEST_MESSAGE)}…` : scrubbed;
}

const REDACTED = '[redacted]';

/** Etherscan's keys: 34 capital letters and digits. Cut wherever they appear, key known or not. */
const ETHERSCAN_KEY = /\b[A-Z0-9]{34}\b/g;

/** The shortest start of a key that is cut out wherever it appears (a truncated echo). */
const SHORTEST_KEY_PREFIX = 8;

/**
 * `text` without the key, in any form an upstream could echo it in: as sent, in another case,
 * URL-encoded, in base64, or cut short (any 8 or more of its first characters); and without
 * anything shaped like an Etherscan key, so that an echo is cut even where the key is not known
 * (a job looked up by id).
 */
export function scrubApiKey(text: string, apiKey: string | undefined): string {
  let scrubbed = text;
  if (apiKey) {
    const bytes = Buffer.from(apiKey);
    const forms = new Set([
      apiKey,
      encodeURIComponent(apiKey),
      bytes.toString('base64'),
      bytes.toString('base64').replace(/=+$/, ''),
      bytes.toString('base64url'),
    ]);
    for (const form of forms) {
      scrubbed = scrubbed.replace(new RegExp(escapeRegExp(form), 'gi'), REDACTED);
    }
    if (apiKey.length >= SHORTEST_KEY_PREFIX)
      scrubbed = scrubbed.replace(prefixes(apiKey), REDACTED);
  }
  return scrubbed.replace(ETHERSCAN_KEY, REDACTED);
}

/** Any run of the key's first 8 or more characters, in any case, matched as long as it runs. */
const prefixes = (key: string) =>
  new RegExp(
    escapeRegExp(key.slice(0, SHORTEST_KEY_PREFIX)) +
      [...key.slice(SHORTEST_KEY_PREFIX)].reduceRight(
        (longer, char) => `(?:${escapeRegExp(char)}${longer})?`,
        '',
      ),
    'gi',
  );

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `Retry-After` in seconds, from either of its forms (seconds, or an HTTP date). */
export function retryAfterSeconds(header: string | null): number | null {
  if (!header) return null;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed), MAX_RETRY_AFTER_SECONDS);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  const seconds = Math.ceil((date - Date.now()) / 1000);
  return Math.min(Math.max(0, seconds), MAX_RETRY_AFTER_SECONDS);
}

/**
 * The longest wait passed on: a day. An upstream's `Retry-After: 99999999999` is not advice a
 * client can use, and would not fit GraphQL's 32-bit Int.
 */
const MAX_RETRY_AFTER_SECONDS = 86_400;

/**
 * The error a refused or failed answer stands for by its status alone (it is none of APIv2's
 * errors), with the service's own words `said` when it gave any.
 */
export function statusFailure(response: UpstreamResponse, said: string | undefined): Error {
  const { status } = response;
  if (status === 429) {
    return new RateLimitedError(
      said ?? 'The verification service is rate limiting requests; try again later.',
      retryAfterSeconds(response.headers.get('retry-after')),
    );
  }
  if (status >= 400 && status < 500) {
    return new VerificationRejectedError(
      said ?? `The verification service refused the request (HTTP ${status}).`,
      status,
    );
  }
  return new UpstreamUnavailableError(
    response.endpoint,
    said ? `it answered HTTP ${status}: ${said}` : `it answered HTTP ${status}`,
    { status },
  );
}

/** The body as JSON, or undefined: error bodies may be HTML pages from a proxy. */
function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The body as `schema` reads it, or undefined when it does not (it may not even be JSON). */
export const bodyAs = <Output>(schema: z.ZodType<Output>, text: string): Output | undefined =>
  schema.safeParse(safeJson(text)).data;

/**
 * Whether a body is one of Sourcify's own error answers: its error handler's `{ error, message }`,
 * its request validator's `{ message, errors }`, or APIv2's `{ customCode, message, errorId }`.
 * A proxy's or load balancer's error page is none of these.
 */
export function isSourcifyErrorBody(text: string): boolean {
  const body = safeJson(text);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { message, error, errors, customCode } = body as Record<string, unknown>;
  return (
    typeof message === 'string' &&
    (typeof error === 'string' || typeof customCode === 'string' || Array.isArray(errors))
  );
}

/**
 * Whether the server has no route for the request at all: a 404 that is not JSON, such as
 * Express's `Cannot POST /session/verify/etherscan` page. Sourcify's own 404s are JSON.
 */
export function isRouteNotFound(response: { status: number; text: string }): boolean {
  return response.status === 404 && safeJson(response.text) === undefined;
}

/**
 * Whether an answer shows the verification service itself failing, for its circuit breaker and
 * retries: a 5xx that is not Sourcify's own error body (a proxy's page, an empty answer), and any
 * 503 or 504. A 502 or 500 carrying Sourcify's own error (Etherscan unreachable, an internal error
 * on one chain) is the service answering.
 */
export function isVerificationServiceFailure(response: { status: number; text: string }): boolean {
  const { status, text } = response;
  return status >= 500 && (status === 503 || status === 504 || !isSourcifyErrorBody(text));
}
