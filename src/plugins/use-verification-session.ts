import { parseCookie, stringifySetCookie } from 'cookie';
import type { Plugin } from 'graphql-yoga';
import { UpstreamSession } from '../upstreams/verification/upstream-session.js';

export interface VerificationSessionOptions {
  /** Path the cookie is sent to: the GraphQL endpoint. */
  readonly path: string;
  /** Send the cookie over HTTPS only. Needs HTTPS in front of the gateway, except on localhost. */
  readonly secure: boolean;
}

/** The gateway's cookie that carries the client's upstream session. */
export const SESSION_COOKIE = 'verify_session';
/** The cookie's lifetime when the upstream does not give one: Sourcify's sessions roll for 12 h. */
const DEFAULT_MAX_AGE_SECONDS = 43_200;
/** Upstream cookies are short tokens; anything bigger is not a session worth relaying. */
const LARGEST_COOKIE_VALUE = 3_000;
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// RFC 6265 cookie-value: cookie-octets, optionally between double quotes.
const COOKIE_VALUE =
  /^(?:"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*"|[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*)$/;

/**
 * Relays each client's verification session, without keeping any state in the gateway: the
 * upstream's session cookies travel to the client inside one cookie of the gateway's own (HttpOnly,
 * SameSite=Lax, on the GraphQL path), and come back with the client's next request. A client
 * without it starts a new upstream session; no two clients ever share one.
 */
export function useVerificationSession({ path, secure }: VerificationSessionOptions): Plugin & {
  /** The session of the client that sent `request`; the same object for the whole request. */
  sessionFor(request: Request): UpstreamSession;
} {
  const sessions = new WeakMap<Request, UpstreamSession>();

  return {
    sessionFor(request) {
      let session = sessions.get(request);
      if (!session) {
        const header = request.headers.get('cookie');
        const carried = header ? parseCookie(header)[SESSION_COOKIE] : undefined;
        session = new UpstreamSession(decodeUpstreamCookies(carried));
        sessions.set(request, session);
      }
      return session;
    },
    onResponse({ request, response }) {
      const session = sessions.get(request);
      if (!session?.changed) return;
      const { cookies } = session;
      const value = Buffer.from(JSON.stringify(cookies)).toString('base64url');
      const keep = Object.keys(cookies).length > 0 && value.length <= LARGEST_COOKIE_VALUE;
      response.headers.append(
        'set-cookie',
        stringifySetCookie(SESSION_COOKIE, keep ? value : '', {
          httpOnly: true,
          sameSite: 'lax',
          secure,
          path,
          maxAge: keep ? (session.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS) : 0,
        }),
      );
    },
  };
}

/**
 * Reads the upstream cookies back from the client's cookie. Anything malformed or tampered with
 * into something that is not a cookie counts as no session: the client simply starts a new one.
 */
function decodeUpstreamCookies(value: string | undefined): Record<string, string> {
  if (!value || value.length > LARGEST_COOKIE_VALUE) return {};
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    const valid = Object.entries(parsed).every(
      ([name, cookie]) =>
        COOKIE_NAME.test(name) && typeof cookie === 'string' && COOKIE_VALUE.test(cookie),
    );
    return valid ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}
