import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { RedisConnection } from '../../redis/redis-connection.js';
import type { RedisSnapshotStore } from '../redis-snapshot-store.js';
import { SharedChangeBus } from '../shared-change-bus.js';

/**
 * The longest message this replica reads on the changes channel: an event carries one incident
 * or maintenance with its updates, far below this; ioredis hands over a message whole, so its
 * length is checked before it is decoded.
 */
const MAX_CHANGE_MESSAGE_BYTES = 1024 * 1024;

/**
 * What travels on the channel: the event, which replica published it, and the snapshot it was
 * found in (the document's name and the version the publisher stored).
 */
const ChangeMessage = z.object({
  origin: z.string().max(64),
  name: z.string().min(1).max(256),
  version: z.string().min(1).max(64),
  event: z.unknown(),
});

/**
 * The `ChangeBus` of several replicas: `SharedChangeBus` over Redis pub/sub. Events are plain
 * JSON on one channel, each with the replica that published it, which skips its own.
 */
export class RedisChangeBus extends SharedChangeBus {
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
    const channel = redis.key('changes');
    /** Tells this replica's own messages apart when Redis sends them back. */
    const origin = randomUUID();
    super({
      snapshots,
      logger,
      transport: {
        send(source, event) {
          const message = JSON.stringify({ origin, ...source, event });
          if (Buffer.byteLength(message) > MAX_CHANGE_MESSAGE_BYTES) return;
          redis.run((client) => client.publish(channel, message)).catch(() => {});
        },
        listen: (receive) =>
          redis.subscribe(
            channel,
            (text) => {
              let message: z.infer<typeof ChangeMessage>;
              try {
                message = ChangeMessage.parse(JSON.parse(text));
              } catch (error) {
                redis.refused('malformed change event', {
                  channel,
                  issues: error instanceof z.ZodError ? error.issues.slice(0, 3) : String(error),
                });
                return;
              }
              if (message.origin === origin) return;
              receive(message, message.event, text.length);
            },
            MAX_CHANGE_MESSAGE_BYTES,
          ),
        refused: (kind, details = {}) => redis.refused(kind, { channel, ...details }),
      },
    });
  }
}
