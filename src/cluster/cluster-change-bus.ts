import type { Logger } from 'pino';
import { SharedChangeBus } from '../upstreams/shared-change-bus.js';
import type { ClusterSnapshotStore } from './cluster-snapshot-store.js';
import type { PrimaryLink } from './primary-link.js';

/** The longest change event a worker sends or reads (as `RedisChangeBus`'s messages). */
const MAX_CHANGE_CHARS = 1024 * 1024;

/** One line a minute at most about events refused. */
const LOG_EVERY_MS = 60_000;

/**
 * The `ChangeBus` of a replica's workers: `SharedChangeBus` through the primary, which passes an
 * event on to every other worker, so that the one diff the fetching worker made reaches every
 * subscriber of the replica in the same moment.
 */
export class ClusterChangeBus extends SharedChangeBus {
  constructor({
    link,
    snapshots,
    logger,
  }: {
    link: PrimaryLink;
    snapshots: Pick<ClusterSnapshotStore, 'storedAt' | 'confirmed'>;
    logger: Pick<Logger, 'warn' | 'error'>;
  }) {
    let refusedAt = 0;
    const refused = (kind: string) => {
      const now = Date.now();
      if (now - refusedAt < LOG_EVERY_MS) return;
      refusedAt = now;
      logger.warn({ refused: kind }, 'a change event from another worker was refused');
    };
    super({
      snapshots,
      logger,
      transport: {
        send(source, event) {
          const text = JSON.stringify(event);
          if (text.length <= MAX_CHANGE_CHARS) link.tell({ t: 'change', ...source }, text);
        },
        listen: (receive) =>
          link.on('change', ({ name, version }, text) => {
            if (text === undefined) return;
            if (text.length > MAX_CHANGE_CHARS) return refused('oversized change event');
            let event: unknown;
            try {
              event = JSON.parse(text);
            } catch {
              return refused('malformed change event');
            }
            receive({ name, version }, event, text.length);
          }),
        refused,
      },
    });
  }
}
