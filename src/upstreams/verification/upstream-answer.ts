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
