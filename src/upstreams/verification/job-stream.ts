import type { ExpectedError } from '../../errors/expected-error.js';
import type { VerificationOutcome } from './model.js';

/** What a watcher sends its subscribers about a job: an outcome, or the error it stands for. */
export type VerificationJobEvent =
  | { readonly kind: 'outcome'; readonly outcome: VerificationOutcome; readonly last: boolean }
  | { readonly kind: 'error'; readonly error: ExpectedError; readonly last: boolean };

/**
 * Events a subscriber has not read yet, at most this many: a job changes a few times (pending,
 * stale, done), but a reader that does not read must not make the gateway hold a history, so the
 * oldest state not yet read is dropped for a newer one. The last event is never dropped.
 */
const MAX_QUEUED = 4;

/**
 * One subscriber's events of a watched job, read by the GraphQL executor. It ends after an event
 * marked `last`, when the watcher ends it, or when its reader lets go (`return`), even while a
 * read is waiting.
 */
export class JobStream implements AsyncIterableIterator<VerificationJobEvent> {
  readonly #queue: VerificationJobEvent[] = [];
  readonly #onEnd: () => void;
  #waiting: ((result: IteratorResult<VerificationJobEvent>) => void) | undefined;
  #ended = false;
  /** Whether an event marked `last` was handed in: nothing comes after it. */
  #closed = false;

  constructor(onEnd: () => void) {
    this.#onEnd = onEnd;
  }

  push(event: VerificationJobEvent): void {
    if (this.#ended || this.#closed) return;
    if (event.last) this.#closed = true;
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      waiting({ value: event, done: false });
      if (event.last) this.#finish();
      return;
    }
    if (this.#queue.length >= MAX_QUEUED) this.#queue.shift();
    this.#queue.push(event);
  }

  next(): Promise<IteratorResult<VerificationJobEvent>> {
    const event = this.#queue.shift();
    if (event) {
      if (event.last) this.#finish();
      return Promise.resolve({ value: event, done: false });
    }
    if (this.#ended || this.#closed) {
      this.#finish();
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<VerificationJobEvent>> {
    this.#queue.length = 0;
    this.#finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Ends the stream: what is queued is still read, then it is done. */
  end(): void {
    this.#closed = true;
    if (this.#queue.length === 0) this.#finish();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #finish(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#onEnd();
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }
}
