const LONGEST_MESSAGE = 500;

/**
 * The upstream's own explanation, fit to show a user: trimmed, bounded, and with any echo of the
 * caller's API key cut out (the key goes upstream and nowhere else).
 */
export function upstreamMessage(
  message: string | null | undefined,
  apiKey: string | undefined,
): string | undefined {
  if (!message?.trim()) return undefined;
  const scrubbed = apiKey ? message.replaceAll(apiKey, '[redacted]') : message;
  return scrubbed.length > LONGEST_MESSAGE ? `${scrubbed.slice(0, LONGEST_MESSAGE)}…` : scrubbed;
}

/** `Retry-After` in seconds, from either of its forms (seconds, or an HTTP date). */
export function retryAfterSeconds(header: string | null): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** The body as JSON, or undefined: error bodies may be HTML pages from a proxy. */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

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
  if (status < 500) return false;
  return status === 503 || status === 504 || !isSourcifyErrorBody(text);
}

/** Etherscan's answer to an API key it does not accept, as Sourcify relays it. */
const REJECTED_KEY = /invalid api key/i;

/** Whether the explorer's failure Sourcify relays is a rejected API key. */
export const isRejectedApiKey = (message: string | null | undefined): boolean =>
  message !== null && message !== undefined && REJECTED_KEY.test(message);
