import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { ChangeBus } from '../../core/status/change-bus.js';
import type { StatusChangeEvent } from '../../core/status/change-event.js';
import { shownEvent } from '../../core/status/change-evidence.js';
import { InMemoryChangeBus } from '../../core/status/in-memory-change-bus.js';
import type { RedisConnection } from '../../redis/redis-connection.js';
import type { RedisSnapshotStore } from '../redis-snapshot-store.js';

/**
 * The longest message this replica reads on the changes channel: an event carries one incident
 * or maintenance with its updates, far below this; ioredis hands over a message whole, so its
 * length is checked before it is decoded.
 */
const MAX_CHANGE_MESSAGE_BYTES = 1024 * 1024;

/**
 * What received events waiting for their check against Redis may hold, counted by their messages'
 * length (a decoded message holds about as much): past it the newest are dropped (a flood on the
 * channel), with a line in the log. A count alone would let a thousand 1 MiB messages wait.
 */
const MAX_PENDING_BYTES = 8 * 1024 * 1024;

/**
 * What travels on the channel: the event, which replica published it, and the snapshot it was
 * found in (the document's name and the version the publisher stored).
 */
const ChangeMessage = z.object({
  origin: z.string().max(64),
  name: z.string().min(1).max(256),
  version: z.string().min(1).max(64),
  event: z.looseObject({
    type: z.enum(['page', 'component', 'incident', 'maintenance']),
    detectedAt: z.iso.datetime(),
  }),
});
type ChangeMessage = z.infer<typeof ChangeMessage>;

/**
 * The `ChangeBus` of several replicas: an event published here goes to this replica's subscribers
 * at once and, over Redis pub/sub, to every other replica's, so that the one diff a replica's
 * fetch produced reaches every subscriber. While Redis is unavailable the replica's own
 * subscribers still get its events: it works alone, as without Redis. Events are plain JSON.
 *
 * Whoever can write to Redis can publish on the channel, so a received event is passed on only
 * once it is checked: it names the snapshot it was found in, Redis holds that snapshot now, and
 * the event says what the snapshot says (`isShownBy`). Events are checked one at a time, in the
 * order they came, so that subscribers get them in publish order.
 */
export class RedisChangeBus implements ChangeBus {
  /** This replica's subscribers. */
  readonly #local: InMemoryChangeBus;
  readonly #redis: RedisConnection;
  readonly #snapshots: Pick<RedisSnapshotStore, 'storedAt' | 'confirmed'>;
  readonly #logger: Pick<Logger, 'error'>;
  readonly #channel: string;
  /** Tells this replica's own messages apart when Redis sends them back. */
  readonly #origin = randomUUID();
  readonly #stopListening: () => void;
  /** This replica's subscriptions, by their `#local` unsubscribe. */
  readonly #subscriptions = new Set<() => void>();
  /** The received events being checked, in order. */
  #checking: Promise<void> = Promise.resolve();
  #pendingBytes = 0;

  constructor({
    redis,
    snapshots,
    logger,
  }: {
    redis: RedisConnection;
    /** Where the snapshots events are found in are stored, and checked. */
    snapshots: Pick<RedisSnapshotStore, 'storedAt' | 'confirmed'>;
    logger: Pick<Logger, 'error'>;
  }) {
    this.#local = new InMemoryChangeBus({ logger });
    this.#redis = redis;
    this.#snapshots = snapshots;
    this.#logger = logger;
    this.#channel = redis.key('changes');
    this.#stopListening = redis.subscribe(
      this.#channel,
      (message) => this.#receive(message),
      MAX_CHANGE_MESSAGE_BYTES,
    );
  }

  publish(event: StatusChangeEvent): void {
    this.#local.publish(event);
    // An event of a snapshot the others cannot read in Redis is one they could not check.
    const source = this.#snapshots.storedAt(Date.parse(event.detectedAt));
    if (!source) return;
    let message: string;
    try {
      message = JSON.stringify({ origin: this.#origin, ...source, event });
    } catch (error) {
      this.#logger.error({ err: error }, 'a change event is not JSON; other replicas miss it');
      return;
    }
    if (Buffer.byteLength(message) > MAX_CHANGE_MESSAGE_BYTES) return;
    this.#redis.run((redis) => redis.publish(this.#channel, message)).catch(() => {});
  }

  subscribe(listener: (event: StatusChangeEvent) => void): () => void {
    const unsubscribe = this.#local.subscribe(listener);
    this.#subscriptions.add(unsubscribe);
    return () => {
      this.#subscriptions.delete(unsubscribe);
      unsubscribe();
    };
  }

  async close(): Promise<void> {
    this.#stopListening();
    await this.#local.close();
  }

  #receive(text: string): void {
    // Nobody here to tell: nothing to check.
    if (this.#subscriptions.size === 0) return;
    let message: ChangeMessage;
    try {
      message = ChangeMessage.parse(JSON.parse(text));
    } catch (error) {
      this.#redis.refused('malformed change event', {
        channel: this.#channel,
        issues: error instanceof z.ZodError ? error.issues.slice(0, 3) : String(error),
      });
      return;
    }
    if (message.origin === this.#origin) return;
    const bytes = text.length;
    if (this.#pendingBytes + bytes > MAX_PENDING_BYTES) {
      this.#redis.refused('change events beyond what can be checked', { channel: this.#channel });
      return;
    }
    this.#pendingBytes += bytes;
    this.#checking = this.#checking
      .then(() => this.#deliver(message))
      .catch((error: unknown) => {
        this.#logger.error({ err: error }, 'checking a change event failed');
      })
      .finally(() => {
        this.#pendingBytes -= bytes;
      });
  }

  async #deliver({ name, version, event }: ChangeMessage): Promise<void> {
    const snapshot = await this.#snapshots.confirmed(name, version);
    // What subscribers get is rebuilt from the snapshot: nothing else of the message reaches them.
    const shown = snapshot && shownEvent(event, snapshot.value, snapshot.previous);
    if (!shown) {
      this.#redis.refused('change event not shown by the stored snapshot', { document: name });
      return;
    }
    this.#local.publish(shown);
  }
}
