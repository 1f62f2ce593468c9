import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RedisConnection } from '../../redis/redis-connection.js';

/** What travels on the channel: the event, and which replica published it. */
interface ChangeMessage<Event> {
  readonly origin: string;
  readonly event: Event;
}

/**
 * The `ChangeBus` of several replicas: an event published here goes to this replica's subscribers
 * at once and, over Redis pub/sub, to every other replica's, so that the one diff a replica's
 * fetch produced reaches every subscriber. While Redis is unavailable the replica's own
 * subscribers still get its events: it works alone, as without Redis. Events are plain JSON.
 */
export class RedisChangeBus<Event extends object> {
  readonly #listeners = new Set<(event: Event) => void>();
  readonly #redis: RedisConnection;
  readonly #logger: Pick<Logger, 'error'>;
  readonly #channel: string;
  /** Tells this replica's own messages apart when Redis sends them back. */
  readonly #origin = randomUUID();
  readonly #stopListening: () => void;

  constructor({ redis, logger }: { redis: RedisConnection; logger: Pick<Logger, 'error'> }) {
    this.#redis = redis;
    this.#logger = logger;
    this.#channel = redis.key('changes');
    this.#stopListening = redis.subscribe(this.#channel, (message) => this.#receive(message));
  }

  /** Fire and forget: never throws, never waits for Redis. */
  publish(event: Event): void {
    this.#deliver(event);
    let message: string;
    try {
      message = JSON.stringify({ origin: this.#origin, event } satisfies ChangeMessage<Event>);
    } catch (error) {
      this.#logger.error({ err: error }, 'a change event is not JSON; other replicas miss it');
      return;
    }
    this.#redis.run((redis) => redis.publish(this.#channel, message)).catch(() => {});
  }

  subscribe(listener: (event: Event) => void): () => void {
    // Wrapped, so that one listener subscribed twice is two subscriptions.
    const entry = (event: Event) => listener(event);
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }

  async close(): Promise<void> {
    this.#stopListening();
    this.#listeners.clear();
  }

  #receive(text: string): void {
    let message: Partial<ChangeMessage<Event>>;
    try {
      message = JSON.parse(text) as Partial<ChangeMessage<Event>>;
    } catch {
      return;
    }
    if (message.origin === this.#origin) return;
    if (typeof message.event !== 'object' || message.event === null) return;
    this.#deliver(message.event);
  }

  #deliver(event: Event): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        // One subscriber's failure is no reason for the others to miss the event.
        this.#logger.error({ err: error }, 'a change listener failed');
      }
    }
  }
}
