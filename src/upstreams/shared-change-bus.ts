import type { Logger } from 'pino';
import { z } from 'zod';
import type { ChangeBus } from '../core/status/change-bus.js';
import { CHANGE_TYPES, type StatusChangeEvent } from '../core/status/change-event.js';
import { shownEvent } from '../core/status/change-evidence.js';
import { InMemoryChangeBus } from '../core/status/in-memory-change-bus.js';
import type { SharedDocuments, StoredSource } from './shared-document.js';

/**
 * What received events waiting for their check may hold, counted by their text's length (a
 * decoded event holds about as much): past it the newest are dropped (a flood), with a line in the
 * log. A count alone would let a thousand 1 MiB events wait.
 */
const MAX_PENDING_CHARS = 8 * 1024 * 1024;

/** What an event from another process must say before it is checked against its snapshot. */
const ReceivedEvent = z.looseObject({ type: z.enum(CHANGE_TYPES), detectedAt: z.iso.datetime() });

/** How events travel between the processes that share snapshots (Redis pub/sub, the primary). */
export interface ChangeTransport {
  /** Sends `event`, found in the stored snapshot `source`, to every other process. */
  send(source: StoredSource, event: StatusChangeEvent): void;
  /**
   * Hands each event another process sent to `receive`: the snapshot it names, the event as
   * decoded, and the length of the text it came in. Returns what stops it.
   */
  listen(receive: (source: StoredSource, event: unknown, chars: number) => void): () => void;
  /** Says that something received was refused, and why (`kind`). */
  refused(kind: string, details?: Record<string, unknown>): void;
}

/**
 * The `ChangeBus` of processes that share snapshots (replicas through Redis, the workers of a
 * replica through their primary): an event published here goes to this process's subscribers at
 * once and, through the transport, to every other's, so that the one diff the fetching process
 * made reaches every subscriber. While the transport is down, this process's own subscribers
 * still get its events.
 *
 * Whoever can write to the transport can send, so a received event is passed on only once it is
 * checked: the snapshot it names is stored now, and subscribers get the event as that snapshot
 * shows it (`shownEvent`), nothing else of what came. Events are checked one at a time, in the
 * order they came, so that subscribers get them in publish order.
 */
export class SharedChangeBus implements ChangeBus {
  readonly #local: InMemoryChangeBus;
  readonly #snapshots: Pick<SharedDocuments<never>, 'storedAt' | 'confirmed'>;
  readonly #transport: ChangeTransport;
  readonly #logger: Pick<Logger, 'error'>;
  readonly #stopListening: () => void;
  #subscribers = 0;
  /** The received events being checked, in order. */
  #checking: Promise<void> = Promise.resolve();
  #pendingChars = 0;

  constructor({
    snapshots,
    transport,
    logger,
  }: {
    /** Where the snapshots events are found in are stored, and checked. */
    snapshots: Pick<SharedDocuments<never>, 'storedAt' | 'confirmed'>;
    transport: ChangeTransport;
    logger: Pick<Logger, 'error'>;
  }) {
    this.#local = new InMemoryChangeBus({ logger });
    this.#snapshots = snapshots;
    this.#transport = transport;
    this.#logger = logger;
    this.#stopListening = transport.listen((source, event, chars) =>
      this.#receive(source, event, chars),
    );
  }

  publish(event: StatusChangeEvent): void {
    this.#local.publish(event);
    // An event of a snapshot the others cannot read is one they could not check.
    const source = this.#snapshots.storedAt(Date.parse(event.detectedAt));
    if (!source) return;
    try {
      this.#transport.send(source, event);
    } catch (error) {
      this.#logger.error(
        { err: error },
        'a change event could not be sent; other processes miss it',
      );
    }
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

  #receive({ name, version }: StoredSource, received: unknown, chars: number): void {
    // Nobody here to tell: nothing to check.
    if (this.#subscribers === 0) return;
    const parsed = ReceivedEvent.safeParse(received);
    if (!parsed.success) {
      this.#transport.refused('malformed change event', {
        issues: parsed.error.issues.slice(0, 3),
      });
      return;
    }
    if (this.#pendingChars + chars > MAX_PENDING_CHARS) {
      this.#transport.refused('change events beyond what can be checked');
      return;
    }
    const event = parsed.data;
    this.#pendingChars += chars;
    this.#checking = this.#checking
      .then(async () => {
        const snapshot = await this.#snapshots.confirmed(name, version);
        const shown = snapshot && shownEvent(event, snapshot.value, snapshot.previous);
        if (shown) this.#local.publish(shown);
        else
          this.#transport.refused('change event not shown by the stored snapshot', {
            document: name,
          });
      })
      .catch((error: unknown) => {
        this.#logger.error({ err: error }, 'checking a change event failed');
      })
      .finally(() => {
        this.#pendingChars -= chars;
      });
  }
}
