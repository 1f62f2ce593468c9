import { parseSetCookie, stringifyCookie } from 'cookie';

/**
 * The cookies that tie one client to its own session at the verification service. It lives for
 * one request: it starts from what the client's gateway cookie carried, takes whatever the
 * upstream sets, and tells the response whether the client's cookie must be renewed.
 */
export class UpstreamSession {
  readonly #cookies: Map<string, string>;
  #changed = false;
  #maxAgeSeconds: number | undefined;

  constructor(cookies: Readonly<Record<string, string>> = {}) {
    this.#cookies = new Map(Object.entries(cookies));
  }

  /** The `Cookie` header to send upstream, or undefined for a client without a session yet. */
  get cookieHeader(): string | undefined {
    return this.#cookies.size === 0
      ? undefined
      : stringifyCookie(Object.fromEntries(this.#cookies), { encode: verbatim });
  }

  get cookies(): Record<string, string> {
    return Object.fromEntries(this.#cookies);
  }

  /** Whether the upstream set or cleared a cookie during this request. */
  get changed(): boolean {
    return this.#changed;
  }

  /** How long the upstream said its session lasts, from its last `Set-Cookie`. */
  get maxAgeSeconds(): number | undefined {
    return this.#maxAgeSeconds;
  }

  /** Takes the upstream's `Set-Cookie` headers; an expired or empty cookie is dropped. */
  absorb(headers: Headers): void {
    for (const header of headers.getSetCookie()) {
      const cookie = parseSetCookie(header, { decode: verbatim });
      if (!cookie.name) continue;
      const said =
        cookie.maxAge ??
        (cookie.expires ? Math.round((cookie.expires.getTime() - Date.now()) / 1000) : undefined);
      // Browsers keep a cookie 400 days at most (RFC 6265bis); a larger or unreadable lifetime
      // (`Max-Age=1e23`) is not passed on as such.
      const lifetime =
        said === undefined || Number.isNaN(said)
          ? undefined
          : Math.min(said, LONGEST_LIFETIME_SECONDS);
      if (!cookie.value || (lifetime !== undefined && lifetime <= 0)) {
        this.#cookies.delete(cookie.name);
      } else {
        this.#cookies.set(cookie.name, cookie.value);
        this.#maxAgeSeconds = lifetime;
      }
      this.#changed = true;
    }
  }
}

const LONGEST_LIFETIME_SECONDS = 400 * 24 * 60 * 60;

/** Cookie values are relayed byte for byte: the upstream alone knows their encoding. */
const verbatim = (value: string) => value;
