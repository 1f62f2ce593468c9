import type { Logger } from 'pino';
import type { ChangeBus } from './change-bus.js';
import type { StatusChangeEvent } from './change-event.js';

/** The `ChangeBus` of one process: events go to this replica's own subscribers, synchronously. */
export class InMemoryChangeBus implements ChangeBus {
  readonly #listeners = new Set<(event: StatusChangeEvent) => void>();
  readonly #logger: Pick<Logger, 'error'> | undefined;

  constructor({ logger }: { logger?: Pick<Logger, 'error'> } = {}) {
    this.#logger = logger;
  }

  publish(event: StatusChangeEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        // One subscriber's failure is no reason for the others to miss the event.
        this.#logger?.error({ err: error, change: event.type }, 'a change listener failed');
      }
    }
  }

  subscribe(listener: (event: StatusChangeEvent) => void): () => void {
    // Wrapped, so that one listener subscribed twice is two subscriptions.
    const entry = (event: StatusChangeEvent) => listener(event);
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }
}
