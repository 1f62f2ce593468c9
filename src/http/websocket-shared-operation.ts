/**
 * What graphql-ws iterates for an operation whose results the gateway writes to the socket itself
 * (a shared subscription's: `SharedSubscriptions` hands each result to thousands of subscribers,
 * and one write each is what it costs). It yields nothing: it only ends, when the shared
 * subscription does (`end`), so that graphql-ws sends `complete` after the last result; when
 * graphql-ws lets go of it first (the client completed it, or the socket closed), `onReturn` says
 * so.
 */
export class WebSocketSharedOperation implements AsyncIterableIterator<never> {
  readonly #onReturn: () => void;
  #waiting: ((result: IteratorResult<never>) => void) | undefined;
  #ended = false;

  constructor(onReturn: () => void) {
    this.#onReturn = onReturn;
  }

  /** The shared subscription ended: graphql-ws completes the operation. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#waiting?.({ value: undefined, done: true });
    this.#waiting = undefined;
  }

  next(): Promise<IteratorResult<never>> {
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<never>> {
    if (!this.#ended) this.#onReturn();
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error: unknown): Promise<IteratorResult<never>> {
    void this.return();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
