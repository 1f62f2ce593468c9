import { RateLimitedError } from '../../errors/rate-limited-error.js';

export interface ClientQuotaOptions {
  /** Verifications one client may start per window. */
  readonly limit: number;
  readonly windowMs: number;
  /**
   * Clients tracked at most; past it the oldest windows are forgotten, so that a flood of
   * addresses cannot grow memory.
   * @default 10000
   */
  readonly maxClients?: number;
  /** @default Date.now */
  readonly now?: () => number;
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
  { limit, windowMs }: Pick<ClientQuotaOptions, 'limit' | 'windowMs'>,
  remainingMs: number,
): RateLimitedError {
  const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
  return new RateLimitedError(
    `You have started ${limit} verifications in ${Math.round(windowMs / 1000)} s, the most the gateway allows one client; try again in ${seconds} s.`,
    seconds,
  );
}

/** The allowance of one process: a window per client, starting at its first verification. */
export class InMemoryClientQuota implements ClientQuota {
  readonly #windows = new Map<string, { start: number; used: number }>();
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #maxClients: number;
  readonly #now: () => number;

  constructor(options: ClientQuotaOptions) {
    this.#limit = options.limit;
    this.#windowMs = options.windowMs;
    this.#maxClients = options.maxClients ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  take(client: string): void {
    const now = this.#now();
    let window = this.#windows.get(client);
    if (!window || now - window.start >= this.#windowMs) {
      this.#windows.delete(client);
      window = { start: now, used: 0 };
      this.#windows.set(client, window);
      this.#forgetOldest();
    }
    if (window.used >= this.#limit) {
      throw quotaExceeded(
        { limit: this.#limit, windowMs: this.#windowMs },
        window.start + this.#windowMs - now,
      );
    }
    window.used += 1;
  }

  #forgetOldest(): void {
    // Maps keep insertion order, and a new window is always inserted last.
    for (const client of this.#windows.keys()) {
      if (this.#windows.size <= this.#maxClients) return;
      this.#windows.delete(client);
    }
  }
}
