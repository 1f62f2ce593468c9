import { randomBytes } from 'node:crypto';
import {
  newSessionId,
  readCookie,
  SESSION_COOKIE_NAME,
  sessionSetCookie,
  unsignSessionCookie,
} from './cookie.js';
import type { VerifiableContract } from './fixture.js';

/** Sourcify's `session.maxAge`: 12 hours, renewed by every request (`rolling: true`). */
export const SESSION_MAX_AGE_MS = 12 * 60 * 60 * 1000;

/** A contract added to a session. */
export interface SessionContract {
  /** Its id within the session: a hash of its compilation. */
  readonly verificationId: string;
  readonly contract: VerifiableContract;
  /** Checksummed; the address of the request that added the contract. */
  readonly address: string;
  readonly chainId: string;
}

/** What Sourcify keeps in a session: the files received and the contracts they make up. */
export interface VerificationSession {
  readonly id: string;
  /** Path of each file received, by its identity (Sourcify keys them by a hash of the content). */
  readonly inputFiles: Map<string, string>;
  /** By verification id, in the order they were added. */
  readonly contracts: Map<string, SessionContract>;
}

export interface SessionStoreOptions {
  /** Sessions kept; past it the least recently used ones are dropped. Default 10,000. */
  capacity?: number;
  /** Default `SESSION_MAX_AGE_MS`. */
  maxAgeMs?: number;
  /** Default `Date.now`. */
  now?: () => number;
}

interface StoredSession {
  readonly session: VerificationSession;
  expiresAt: number;
}

/**
 * In-memory sessions with express-session's rules (`saveUninitialized: true`, `rolling: true`):
 * a request without a valid cookie gets a new session, whatever the reason (no cookie, unsigned
 * or badly signed value, unknown or expired id), and every answer renews the cookie.
 */
export class SessionStore {
  /** Signs cookies; a new one per simulator, so cookies do not outlive it. */
  readonly #secret = randomBytes(32).toString('base64');
  readonly #capacity: number;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  /** Least recently used first. */
  readonly #sessions = new Map<string, StoredSession>();

  constructor(options: SessionStoreOptions = {}) {
    this.#capacity = options.capacity ?? 10_000;
    this.#maxAgeMs = options.maxAgeMs ?? SESSION_MAX_AGE_MS;
    this.#now = options.now ?? Date.now;
    if (!Number.isSafeInteger(this.#capacity) || this.#capacity < 1) {
      throw new RangeError('capacity must be a positive integer');
    }
  }

  /** The session a `Cookie` header points to, or a new one. */
  open(cookieHeader: string | undefined): VerificationSession {
    const value = readCookie(cookieHeader, SESSION_COOKIE_NAME);
    const id = value === undefined ? null : unsignSessionCookie(value, this.#secret);
    const stored = id === null ? undefined : this.#sessions.get(id);
    if (stored && stored.expiresAt > this.#now()) return stored.session;
    if (id !== null) this.#sessions.delete(id);

    const session: VerificationSession = {
      id: newSessionId(),
      inputFiles: new Map(),
      contracts: new Map(),
    };
    this.#store(session);
    return session;
  }

  /** Renews the session (rolling) and gives the `Set-Cookie` header for the answer. */
  touch(session: VerificationSession): string {
    this.#store(session);
    const stored = this.#sessions.get(session.id);
    return sessionSetCookie(session.id, this.#secret, new Date(stored?.expiresAt ?? this.#now()));
  }

  /** Contract addresses of each live session, least recently used first. */
  snapshot(): Map<string, string[]> {
    const now = this.#now();
    const result = new Map<string, string[]>();
    for (const [id, { session, expiresAt }] of this.#sessions) {
      if (expiresAt > now) {
        result.set(
          id,
          [...session.contracts.values()].map((entry) => entry.address),
        );
      }
    }
    return result;
  }

  clear(): void {
    this.#sessions.clear();
  }

  #store(session: VerificationSession): void {
    const now = this.#now();
    this.#sessions.delete(session.id);
    this.#sessions.set(session.id, { session, expiresAt: now + this.#maxAgeMs });
    // The oldest entries expire first: drop expired ones, then any past the capacity.
    for (const [id, stored] of this.#sessions) {
      if (stored.expiresAt > now && this.#sessions.size <= this.#capacity) break;
      this.#sessions.delete(id);
    }
  }
}
