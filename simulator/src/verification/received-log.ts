/**
 * A verification request as the upstream received it: `POST /session/verify/:explorer` (session
 * API) or `POST /v2/verify/etherscan/:chainId/:address` (APIv2, `api: 'v2'`).
 */
export interface ReceivedVerification {
  /** `'v2'` for an APIv2 request; absent for the session API. */
  readonly api?: 'v2';
  /**
   * The explorer path segment, as sent (`etherscan`, or an unknown one); for APIv2's verifications
   * from source, `std-json` or `metadata`.
   */
  readonly explorer: string;
  /**
   * Session API: body fields as sent: a string as is, an absent field as `''` (`undefined` for
   * `apiKey`), any other JSON value as its JSON text; all are `''` when the body was not a JSON
   * object. APIv2: the path segments as sent (URL-decoded), and the body's `apiKey` as sent.
   */
  readonly address: string;
  /** `chainId`, or Sourcify's older `chain` when `chainId` is absent. */
  readonly chainId: string;
  readonly apiKey: string | undefined;
  /**
   * The session the request was served in; null when it was refused before reaching one, and
   * always for APIv2 (it has no sessions).
   */
  readonly sessionId: string | null;
  /** APIv2 only: the job the request started, or null when it was refused. */
  readonly verificationId?: string | null;
  /** The raw `Cookie` header. */
  readonly cookie: string | undefined;
  /** The status the upstream answered (a fault may still have mangled the answer). */
  readonly status: number;
  /** APIv2 source verifications: the request body's size in bytes. */
  readonly bytes?: number;
}

/** The latest `capacity` entries, oldest first; the count stays exact. */
export class ReceivedLog {
  readonly #capacity: number;
  #ring: ReceivedVerification[] = [];
  #next = 0;
  #total = 0;

  constructor(capacity = 10_000) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError('capacity must be a positive integer');
    }
    this.#capacity = capacity;
  }

  record(entry: ReceivedVerification): void {
    if (this.#ring.length < this.#capacity) this.#ring.push(entry);
    else this.#ring[this.#next] = entry;
    this.#next = (this.#next + 1) % this.#capacity;
    this.#total += 1;
  }

  entries(): ReceivedVerification[] {
    if (this.#ring.length < this.#capacity) return [...this.#ring];
    return [...this.#ring.slice(this.#next), ...this.#ring.slice(0, this.#next)];
  }

  /** Every request recorded since the last reset, including those no longer kept. */
  get count(): number {
    return this.#total;
  }

  reset(): void {
    this.#ring = [];
    this.#next = 0;
    this.#total = 0;
  }
}
