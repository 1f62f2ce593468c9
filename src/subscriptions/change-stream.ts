import type { StatusChangeEvent } from '../core/status/change-event.js';

/**
 * Why a status page's subscriptions are ended by a reload of the pages: one they follow was
 * removed, or its feed changed (see `StatusPages.reconfigure`).
 */
export type PagesEndReason = 'page-removed' | 'page-changed';

/**
 * Why a subscription's stream ended, as its close log line and metrics say: `complete` when it had
 * nothing more to send (the job it watched finished).
 */
export type StreamEndReason = 'client' | 'complete' | 'shutdown' | 'slow' | PagesEndReason;

/**
 * What a stream hands its reader: an event, or, last, word that it fell behind (`overflow`) or
 * that pages it follows are no longer configured as they were (`pages`): the client is told why.
 */
export type StreamItem =
  | StatusChangeEvent
  | { readonly type: 'overflow'; readonly backlog: number }
  | { readonly type: 'pages'; readonly reason: PagesEndReason; readonly slugs: readonly string[] };

export interface ChangeStreamOptions {
  /** Which events this subscription wants; the others are never queued. */
  readonly accept: (event: StatusChangeEvent) => boolean;
  /**
   * Events that may wait for the reader; past it the stream hands an `overflow` item and ends.
   * Whole-page events of the same page replace each other while they wait.
   */
  readonly backlog: number;
  /**
   * Called right before each item is handed to the executor (fresh per-event state), and as the
   * reader starts waiting for one: the executor is done with the event before by then, and an idle
   * subscription keeps nothing it read (a whole feed snapshot, which each refetch replaces).
   */
  readonly beforeEach?: () => void;
  /** Called once, when the stream ends, whatever ended it. */
  readonly onEnd: (reason: StreamEndReason) => void;
}

/**
 * One subscription's events: fed by `push`, read by the GraphQL executor. Unlike an async
 * generator, it ends at once when its reader lets go (`return`: the client unsubscribed or went
 * away) or the gateway ends it (`end`), even while a read is waiting: nothing is held until a next
 * event that may never come.
 */
export class ChangeStream implements AsyncIterableIterator<StreamItem> {
  readonly #options: ChangeStreamOptions;
  readonly #queue: StreamItem[] = [];
  #waiting: ((result: IteratorResult<StreamItem>) => void) | undefined;
  #ended = false;

  constructor(options: ChangeStreamOptions) {
    this.#options = options;
  }

  /** Queues `event` if the subscription wants it. */
  push(event: StatusChangeEvent): void {
    if (this.#ended || !this.#options.accept(event)) return;
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      this.#options.beforeEach?.();
      waiting({ value: event, done: false });
      return;
    }
    if (
      event.type === 'page' &&
      this.#queue.some((queued) => queued.type === 'page' && queued.pageSlug === event.pageSlug)
    ) {
      return;
    }
    if (this.#queue.length < this.#options.backlog) {
      this.#queue.push(event);
      return;
    }
    this.endWith({ type: 'overflow', backlog: this.#options.backlog }, 'slow');
  }

  /**
   * Completes the stream, once, with `last` as its last item (what tells the client why): what was
   * queued before is dropped.
   */
  endWith(last: Exclude<StreamItem, StatusChangeEvent>, reason: StreamEndReason): void {
    if (this.#ended) return;
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      this.#options.beforeEach?.();
      waiting({ value: last, done: false });
    } else {
      this.#queue.splice(0, this.#queue.length, last);
    }
    this.end(reason);
  }

  next(): Promise<IteratorResult<StreamItem>> {
    const item = this.#queue.shift();
    if (!item && this.#ended) return Promise.resolve({ value: undefined, done: true });
    this.#options.beforeEach?.();
    if (item) return Promise.resolve({ value: item, done: false });
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  /** The reader is done (the client unsubscribed or went away). */
  return(): Promise<IteratorResult<StreamItem>> {
    this.#queue.length = 0;
    this.end('client');
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Completes the stream, once: what is already queued is still read, then it is done. */
  end(reason: StreamEndReason): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#options.onEnd(reason);
    const resolve = this.#waiting;
    this.#waiting = undefined;
    resolve?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
