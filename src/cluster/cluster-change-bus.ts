import type { Logger } from 'pino';
import { z } from 'zod';
import type { ChangeBus } from '../core/status/change-bus.js';
import type { StatusChangeEvent } from '../core/status/change-event.js';
import { shownEvent } from '../core/status/change-evidence.js';
import { InMemoryChangeBus } from '../core/status/in-memory-change-bus.js';
import type { ClusterSnapshotStore } from './cluster-snapshot-store.js';
import type { PrimaryLink } from './primary-link.js';

/** The longest change event a worker sends or reads (as `RedisChangeBus`'s messages). */
const MAX_CHANGE_CHARS = 1024 * 1024;

/** What received events waiting for their check may hold, by their text's length. */
const MAX_PENDING_CHARS = 8 * 1024 * 1024;

/** One line a minute at most about events refused. */
const LOG_EVERY_MS = 60_000;

const ReceivedEvent = z.looseObject({
  type: z.enum(['page', 'component', 'incident', 'maintenance']),
  detectedAt: z.iso.datetime(),
});

/**
 * The `ChangeBus` of a replica's workers: an event published here goes to this worker's
 * subscribers at once and, through the primary, to every other worker's, so that the one diff the
 * fetching worker made reaches every subscriber of the replica in the same moment. As over Redis,
 * a received event is passed on once the primary holds the snapshot it names, rebuilt from that
 * snapshot (`shownEvent`), one at a time in the order they came. While the primary cannot be
 * reached, the worker's own subscribers still get its events.
 */
export class ClusterChangeBus implements ChangeBus {
  readonly #local: InMemoryChangeBus;
  readonly #link: PrimaryLink;
  readonly #snapshots: Pick<ClusterSnapshotStore, 'storedAt' | 'confirmed'>;
  readonly #logger: Pick<Logger, 'warn' | 'error'>;
  readonly #stopListening: () => void;
  #subscribers = 0;
  #checking: Promise<void> = Promise.resolve();
  #pendingChars = 0;
  #refusedAt = 0;

  constructor({
    link,
    snapshots,
    logger,
  }: {
    link: PrimaryLink;
    snapshots: Pick<ClusterSnapshotStore, 'storedAt' | 'confirmed'>;
    logger: Pick<Logger, 'warn' | 'error'>;
  }) {
    this.#local = new InMemoryChangeBus({ logger });
    this.#link = link;
    this.#snapshots = snapshots;
    this.#logger = logger;
    this.#stopListening = link.on('change', ({ name, version }, body) =>
      this.#receive(name, version, body),
    );
  }

  publish(event: StatusChangeEvent): void {
    this.#local.publish(event);
    const source = this.#snapshots.storedAt(Date.parse(event.detectedAt));
    if (!source) return;
    let text: string;
    try {
      text = JSON.stringify(event);
    } catch (error) {
      this.#logger.error({ err: error }, 'a change event is not JSON; other workers miss it');
      return;
    }
    if (text.length > MAX_CHANGE_CHARS) return;
    this.#link.tell({ t: 'change', ...source }, text);
  }

  subscribe(listener: (event: StatusChangeEvent) => void): () => void {
    const unsubscribe = this.#local.subscribe(listener);
    this.#subscribers += 1;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      this.#subscribers -= 1;
      unsubscribe();
    };
  }

  async close(): Promise<void> {
    this.#stopListening();
    await this.#local.close();
  }

  #receive(name: string, version: string, text: string | undefined): void {
    if (this.#subscribers === 0 || text === undefined) return;
    if (text.length > MAX_CHANGE_CHARS || this.#pendingChars + text.length > MAX_PENDING_CHARS) {
      this.#refused('change events beyond what can be checked');
      return;
    }
    let event: z.infer<typeof ReceivedEvent>;
    try {
      event = ReceivedEvent.parse(JSON.parse(text));
    } catch {
      this.#refused('malformed change event');
      return;
    }
    const chars = text.length;
    this.#pendingChars += chars;
    this.#checking = this.#checking
      .then(async () => {
        const snapshot = await this.#snapshots.confirmed(name, version);
        const shown = snapshot && shownEvent(event, snapshot.value, snapshot.previous);
        if (shown) this.#local.publish(shown);
        else this.#refused('change event not shown by the stored snapshot');
      })
      .catch((error: unknown) => {
        this.#logger.error({ err: error }, 'checking a change event failed');
      })
      .finally(() => {
        this.#pendingChars -= chars;
      });
  }

  #refused(kind: string): void {
    const now = Date.now();
    if (now - this.#refusedAt < LOG_EVERY_MS) return;
    this.#refusedAt = now;
    this.#logger.warn({ refused: kind }, 'a change event from another worker was refused');
  }
}
