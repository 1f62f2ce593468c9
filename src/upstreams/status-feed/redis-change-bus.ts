import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RedisConnection } from '../../redis/redis-connection.js';
import type { ChangeBus } from './change-bus.js';
import type { StatusChangeEvent } from './change-event.js';
import { InMemoryChangeBus } from './in-memory-change-bus.js';

/** What travels on the channel: the event, and which replica published it. */
interface ChangeMessage {
  readonly origin: string;
  readonly event: StatusChangeEvent;
}

/**
 * The `ChangeBus` of several replicas: an event published here goes to this replica's subscribers
 * at once and, over Redis pub/sub, to every other replica's, so that the one diff a replica's
 * fetch produced reaches every subscriber. While Redis is unavailable the replica's own
 * subscribers still get its events: it works alone, as without Redis. Events are plain JSON.
 */
export class RedisChangeBus implements ChangeBus {
  /** This replica's subscribers. */
  readonly #local: InMemoryChangeBus;
  readonly #redis: RedisConnection;
  readonly #logger: Pick<Logger, 'error'>;
  readonly #channel: string;
  /** Tells this replica's own messages apart when Redis sends them back. */
  readonly #origin = randomUUID();
  readonly #stopListening: () => void;

  constructor({ redis, logger }: { redis: RedisConnection; logger: Pick<Logger, 'error'> }) {
    this.#local = new InMemoryChangeBus({ logger });
    this.#redis = redis;
    this.#logger = logger;
    this.#channel = redis.key('changes');
    this.#stopListening = redis.subscribe(this.#channel, (message) => this.#receive(message));
  }

  publish(event: StatusChangeEvent): void {
    this.#local.publish(event);
    let message: string;
    try {
      message = JSON.stringify({ origin: this.#origin, event } satisfies ChangeMessage);
    } catch (error) {
      this.#logger.error({ err: error }, 'a change event is not JSON; other replicas miss it');
      return;
    }
    this.#redis.run((redis) => redis.publish(this.#channel, message)).catch(() => {});
  }

  subscribe(listener: (event: StatusChangeEvent) => void): () => void {
    return this.#local.subscribe(listener);
  }

  async close(): Promise<void> {
    this.#stopListening();
    await this.#local.close();
  }

  #receive(text: string): void {
    let message: Partial<ChangeMessage>;
    try {
      message = JSON.parse(text) as Partial<ChangeMessage>;
    } catch {
      return;
    }
    if (message.origin === this.#origin) return;
    if (typeof message.event !== 'object' || message.event === null) return;
    this.#local.publish(message.event);
  }
}
