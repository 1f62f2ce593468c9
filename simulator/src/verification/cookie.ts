import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/*
 * The session cookie as Sourcify's express-session sets it: `sourcify_vid=s%3A<id>.<signature>`,
 * where the signature is the unpadded base64 HMAC-SHA256 of the id with the server's secret
 * (cookie-signature), and the value is URL-encoded (cookie).
 */

export const SESSION_COOKIE_NAME = 'sourcify_vid';

/** A new session id, like express-session's `uid-safe(24)`: 32 base64url characters. */
export function newSessionId(): string {
  return randomBytes(24).toString('base64url');
}

function sign(id: string, secret: string): string {
  const signature = createHmac('sha256', secret).update(id).digest('base64').replace(/=+$/, '');
  return `${id}.${signature}`;
}

/** The session id a cookie value carries, or null when it is unsigned or its signature is bad. */
export function unsignSessionCookie(value: string, secret: string): string | null {
  if (!value.startsWith('s:')) return null;
  const signed = value.slice(2);
  const dot = signed.lastIndexOf('.');
  if (dot <= 0) return null;
  const id = signed.slice(0, dot);
  const expected = Buffer.from(sign(id, secret));
  const received = Buffer.from(signed);
  return expected.length === received.length && timingSafeEqual(expected, received) ? id : null;
}

/**
 * The first cookie called `name` in a `Cookie` header, URL-decoded when it decodes, as the
 * `cookie` package parses it; undefined when absent.
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals < 0 || pair.slice(0, equals).trim() !== name) continue;
    let value = pair.slice(equals + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1);
    }
    if (!value.includes('%')) return value;
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  }
  return undefined;
}

/** The `Set-Cookie` value for a session, expiring at `expires` (secure: false, the default). */
export function sessionSetCookie(id: string, secret: string, expires: Date): string {
  const value = encodeURIComponent(`s:${sign(id, secret)}`);
  return `${SESSION_COOKIE_NAME}=${value}; Path=/; Expires=${expires.toUTCString()}; HttpOnly; SameSite=Lax`;
}
