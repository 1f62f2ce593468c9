/**
 * At most `size` requests in flight to one upstream; the others wait their turn, first come first
 * served, for at most `waitMs`. Without it, one client's burst (2,700 contract lookups in one
 * `_entities` call) opens thousands of connections to a third party, which answers by
 * rate-limiting the gateway's address for every user. One set may serve several clients: the
 * status pages of one host share theirs, whichever page, field or request asks.
 */
export class RequestSlots {
  readonly size: number;
  #inUse = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.size = size;
  }

  /** Resolves once a slot is free, true; false when none came free within `waitMs`. */
  acquire(waitMs: number): Promise<boolean> {
    if (this.#inUse < this.size) {
      this.#inUse += 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const grant = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const at = this.#waiting.indexOf(grant);
        if (at !== -1) this.#waiting.splice(at, 1);
        resolve(false);
      }, waitMs);
      this.#waiting.push(grant);
    });
  }

  /** Frees a slot, handing it to the longest waiter if there is one. */
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#inUse -= 1;
  }
}
