import type { ExecutionResult } from 'graphql';
import { slowSubscriber } from '../errors/subscription-error.js';

/**
 * One subscriber's results of a shared subscription, read by its transport (graphql-ws iterates
 * it): fed by `push`, ended by `end`. More than `backlog` results unread, and it hands a last
 * result with `SLOW_SUBSCRIBER` and ends; `onSlow` and `onReturn` (the reader let go) tell whoever
 * feeds it.
 */
export class ResultQueue implements AsyncIterableIterator<ExecutionResult> {
  readonly #backlog: number;
  readonly #onSlow: () => void;
  readonly #onReturn: () => void;
  readonly #queue: ExecutionResult[] = [];
  #waiting: ((result: IteratorResult<ExecutionResult>) => void) | undefined;
  #ended = false;

  constructor(options: { backlog: number; onSlow: () => void; onReturn: () => void }) {
    this.#backlog = options.backlog;
    this.#onSlow = options.onSlow;
    this.#onReturn = options.onReturn;
  }

  push(result: ExecutionResult): void {
    if (this.#ended) return;
    if (this.#waiting) {
      const resolve = this.#waiting;
      this.#waiting = undefined;
      resolve({ value: result, done: false });
      return;
    }
    if (this.#queue.length < this.#backlog) {
      this.#queue.push(result);
      return;
    }
    this.#queue.splice(0, this.#queue.length, {
      errors: [slowSubscriber('SUBSCRIPTION_BACKLOG', this.#backlog)],
    });
    this.end();
    this.#onSlow();
  }

  /** No more results: what is queued is still read, then it is done. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const resolve = this.#waiting;
    this.#waiting = undefined;
    resolve?.({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    const result = this.#queue.shift();
    if (result) return Promise.resolve({ value: result, done: false });
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<ExecutionResult>> {
    this.#queue.length = 0;
    if (!this.#ended) this.#onReturn();
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error: unknown): Promise<IteratorResult<ExecutionResult>> {
    void this.return();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
