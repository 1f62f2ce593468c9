import type { Logger } from 'pino';
import type { FeedDocument, StatusFeed } from './status-feed.js';

export interface FeedPollerOptions {
  readonly feed: Pick<StatusFeed, 'poll'>;
  /** The page's `pollIntervalMs`, or `STATUS_POLL_INTERVAL_MS`. */
  readonly intervalMs: number;
  /** `STATUS_CACHE_TTL_MS`: a document is not read again before the snapshot on hand expires. */
  readonly ttlMs: number;
  readonly logger: Pick<Logger, 'debug'>;
}

/**
 * Reads the feed's documents while subscriptions need them, so that their changes are found (a
 * load is where a change is found: `SnapshotCache`'s `onLoaded`). One loop per document, running
 * while at least one holder has acquired it. Each read goes through the document's cache, and the
 * next one is timed for `intervalMs` after the snapshot it got was fetched (or last confirmed
 * unchanged), and no sooner than it expires: a page polled every minute costs one upstream request
 * a minute while only subscriptions follow it, and no more while queries read it within the TTL
 * (each of their refetches moves the poller's next read on).
 */
export class FeedPoller {
  readonly #options: FeedPollerOptions;
  readonly #loops = new Map<FeedDocument, Loop>();
  #closed = false;

  constructor(options: FeedPollerOptions) {
    this.#options = options;
  }

  /** Polls `documents` until the returned release is called (once; later calls do nothing). */
  acquire(documents: readonly FeedDocument[]): () => void {
    if (this.#closed) return () => {};
    for (const document of documents) {
      const loop = this.#loops.get(document);
      if (loop) loop.holders += 1;
      else {
        const started: Loop = { holders: 1, timer: undefined };
        this.#loops.set(document, started);
        void this.#poll(document, started);
      }
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const document of documents) {
        const loop = this.#loops.get(document);
        if (!loop || --loop.holders > 0) continue;
        clearTimeout(loop.timer);
        this.#loops.delete(document);
      }
    };
  }

  /** The documents being polled now. */
  get polling(): FeedDocument[] {
    return [...this.#loops.keys()];
  }

  /** Stops every loop; acquiring afterwards polls nothing. */
  close(): void {
    this.#closed = true;
    for (const loop of this.#loops.values()) clearTimeout(loop.timer);
    this.#loops.clear();
  }

  async #poll(document: FeedDocument, loop: Loop): Promise<void> {
    const { feed, intervalMs, ttlMs, logger } = this.#options;
    let delay = intervalMs;
    try {
      const snapshot = await feed.poll(document);
      // A stale stand-in is an outage: try again after the interval, not in a tight loop.
      if (!snapshot.stale) {
        const expires = snapshot.fetchedAt.getTime() + Math.max(ttlMs, intervalMs);
        delay = Math.max(expires - Date.now(), 0) + 1;
      }
    } catch (error) {
      // The feed is down, or does not serve this document: its readers see that; the poller waits.
      logger.debug({ err: error, document }, 'polling the status feed failed');
    }
    // Released meanwhile (and perhaps acquired again, which started a loop of its own).
    if (this.#loops.get(document) !== loop) return;
    loop.timer = setTimeout(() => void this.#poll(document, loop), delay);
    loop.timer.unref();
  }
}

interface Loop {
  holders: number;
  timer: NodeJS.Timeout | undefined;
}
