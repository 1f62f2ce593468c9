import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * What of a request, besides its operation, a subscription's answer depends on: its `Origin` (the
 * CORS headers an SSE answer carries) and its cookies (the verification session), the cookies as a
 * digest. Subscribers share a subscription only when this is the same (`SharedSubscriptions`).
 */
export function sharingKeyOf(req: IncomingMessage): string {
  const { origin = '', cookie } = req.headers;
  return cookie === undefined ? origin : `${origin}\n${hash('sha256', cookie, 'base64url')}`;
}
