export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit. */
  readonly failureThreshold: number;
  /** How long an open circuit fails fast before it lets one probe through. */
  readonly cooldownMs: number;
  /** Told of every change of state, for metrics and logs. */
  readonly onStateChange?: (state: CircuitState) => void;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * Stops piling requests onto an upstream that keeps failing. Closed, every request goes through;
 * after `failureThreshold` failures in a row it opens and refuses requests for `cooldownMs`; then,
 * half-open, it lets a single probe through: success closes it, failure opens it again.
 */
export class CircuitBreaker {
  readonly #options: CircuitBreakerOptions;
  readonly #now: () => number;
  #state: CircuitState = 'closed';
  #failures = 0;
  #openedAt = 0;
  #probing = false;

  constructor(options: CircuitBreakerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  get state(): CircuitState {
    return this.#state;
  }

  /** Milliseconds until an open circuit lets a probe through. */
  get retryInMs(): number {
    return this.#state === 'open'
      ? Math.max(0, this.#openedAt + this.#options.cooldownMs - this.#now())
      : 0;
  }

  /** Whether a request may go to the upstream now. A `true` must be followed by a report. */
  admit(): boolean {
    if (this.#state === 'closed') return true;
    if (this.#state === 'open') {
      if (this.retryInMs > 0) return false;
      this.#set('half-open');
    }
    if (this.#probing) return false;
    this.#probing = true;
    return true;
  }

  succeeded(): void {
    this.#failures = 0;
    this.#probing = false;
    if (this.#state !== 'closed') this.#set('closed');
  }

  failed(): void {
    // Requests let through before the circuit opened may still fail after it; they must not
    // restart the cool-down.
    if (this.#state === 'open') return;
    this.#failures += 1;
    this.#probing = false;
    if (this.#state === 'half-open' || this.#failures >= this.#options.failureThreshold) {
      this.#openedAt = this.#now();
      this.#set('open');
    }
  }

  #set(state: CircuitState): void {
    this.#state = state;
    this.#options.onStateChange?.(state);
  }
}
