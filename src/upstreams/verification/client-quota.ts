import { LRUCache } from 'lru-cache';
import { RateLimitedError } from '../../errors/rate-limited-error.js';

export interface ClientQuotaOptions {
  /** Verifications one client may start per window. */
  readonly limit: number;
  readonly windowMs: number;
}

/**
 * A per-client allowance of verifications. The verification service limits requests per IP
 * address, and every client of the gateway shares its address: without this, one client spends
 * every user's quota. Kept in this process (`InMemoryClientQuota`), or shared by the replicas
 * (`RedisClientQuota`).
 */
export interface ClientQuota {
  /** Takes one verification for `client`, or fails with `RateLimitedError` saying when to retry. */
  take(client: string): void | Promise<void>;
}

/**
 * The answer past the allowance: `RateLimitedError` with the seconds until the client's window
 * ends (at least 1).
 */
export function quotaExceeded(
  { limit, windowMs }: ClientQuotaOptions,
  remainingMs: number,
): RateLimitedError {
  const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
  return new RateLimitedError(
    `You have started ${limit} verifications in ${Math.round(windowMs / 1000)} s, the most the gateway allows one client; try again in ${seconds} s.`,
    seconds,
  );
}

/**
 * Clients tracked at most; past it the least recently seen are forgotten, so that a flood of
 * addresses cannot grow memory.
 */
const MAX_CLIENTS = 10_000;

/** The allowance of one process: a window per client, starting at its first verification. */
export class InMemoryClientQuota implements ClientQuota {
  readonly #options: ClientQuotaOptions;
  /** Verifications each client used in its window, kept for the window's length. */
  readonly #windows: LRUCache<string, { used: number }>;

  constructor(options: ClientQuotaOptions) {
    this.#options = options;
    this.#windows = new LRUCache({ max: MAX_CLIENTS, ttl: options.windowMs });
  }

  take(client: string): void {
    let window = this.#windows.get(client);
    if (!window) {
      window = { used: 0 };
      this.#windows.set(client, window);
    }
    if (window.used >= this.#options.limit) {
      throw quotaExceeded(this.#options, this.#windows.getRemainingTTL(client));
    }
    window.used += 1;
  }
}
