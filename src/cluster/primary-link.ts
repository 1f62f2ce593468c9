import type { Logger } from 'pino';
import type { z } from 'zod';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import { decode, type Envelope, encode } from './envelope.js';
import { type Ask, FromPrimary, type FromWorker } from './messages.js';

/** How long an answer is waited for, unless the ask says otherwise: the primary answers at once. */
const ANSWER_MS = 5_000;

type Kind = z.infer<typeof FromPrimary>['t'];
/** An ask as a worker writes it: the link gives it its kind and id. */
type AskHead = Ask extends infer Each ? (Each extends Ask ? Omit<Each, 't' | 'id'> : never) : never;
/** A message a worker tells (not an ask). */
type TellHead = Exclude<z.infer<typeof FromWorker>, { t: 'ask' }>;

/**
 * What a worker process has of node:cluster's channel: the process's IPC to its primary.
 * @default process
 */
export interface WorkerProcess {
  readonly connected: boolean;
  send?(message: string): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'disconnect', listener: () => void): unknown;
}

/**
 * A worker's link to its primary: asks that are answered (each waited for a bounded time), and
 * messages told either way. While the primary cannot be reached (its channel closed, an answer
 * late) an ask fails with `RedisUnavailableError`, what every shared store fails with, so that
 * whoever asked does the work alone, as a gateway of one process would.
 */
export class PrimaryLink {
  readonly #process: WorkerProcess;
  readonly #logger: Pick<Logger, 'warn' | 'error'>;
  readonly #pending = new Map<
    number,
    { resolve: (answer: Envelope) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }
  >();
  readonly #listeners = new Map<Kind, Set<(head: never, body: string | undefined) => void>>();
  #nextId = 0;
  /** When a refused message was last logged: one line a minute at most. */
  #refusedAt = 0;

  constructor({
    logger,
    process: worker = process as WorkerProcess,
  }: {
    logger: Pick<Logger, 'warn' | 'error'>;
    process?: WorkerProcess;
  }) {
    this.#process = worker;
    this.#logger = logger;
    worker.on('message', (message) => this.#receive(message));
    worker.on('disconnect', () => {
      for (const [id, { reject, timer }] of this.#pending) {
        clearTimeout(timer);
        this.#pending.delete(id);
        reject(new RedisUnavailableError('the primary is gone'));
      }
    });
  }

  /** Whether the primary can be reached now; when not, the shared stores work alone. */
  get connected(): boolean {
    return this.#process.connected;
  }

  /**
   * Sends an ask (`head` gets its id) and resolves with the primary's answer; rejects with
   * `RedisUnavailableError` when it cannot be sent or is not answered within `timeoutMs`.
   */
  ask(head: AskHead, body?: string, timeoutMs = ANSWER_MS): Promise<Envelope> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      if (!this.#send({ t: 'ask', id, ...head }, body)) {
        reject(new RedisUnavailableError(`the primary could not be asked to ${head.op}`));
        return;
      }
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(
          new RedisUnavailableError(`the primary did not answer ${head.op} in ${timeoutMs} ms`),
        );
      }, timeoutMs);
      timer.unref();
      this.#pending.set(id, { resolve, reject, timer });
    });
  }

  /** Sends a message that is not answered; false when it could not be sent (dropped). */
  tell(head: TellHead, body?: string): boolean {
    return this.#send(head, body);
  }

  /** Calls `listener` with each message of kind `kind` the primary sends (not answers). */
  on<K extends Exclude<Kind, 'answer'>>(
    kind: K,
    listener: (
      head: Extract<z.infer<typeof FromPrimary>, { t: K }>,
      body: string | undefined,
    ) => void,
  ): () => void {
    let listeners = this.#listeners.get(kind);
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(kind, listeners);
    }
    const entry = listener as (head: never, body: string | undefined) => void;
    listeners.add(entry);
    return () => listeners.delete(entry);
  }

  #send(head: object, body: string | undefined): boolean {
    if (!this.#process.connected || !this.#process.send) return false;
    const message = encode(head, body);
    if (message === undefined) return false;
    try {
      this.#process.send(message);
      return true;
    } catch {
      // The channel closed meanwhile.
      return false;
    }
  }

  #receive(message: unknown): void {
    // Not ours (another module's message on the channel): not a string.
    if (typeof message !== 'string') return;
    const envelope = decode(message);
    const parsed = envelope && FromPrimary.safeParse(envelope.head);
    if (!envelope || !parsed?.success) {
      this.#refused();
      return;
    }
    const head = parsed.data;
    if (head.t === 'answer') {
      const pending = this.#pending.get(head.id);
      if (!pending) return;
      this.#pending.delete(head.id);
      clearTimeout(pending.timer);
      pending.resolve(envelope);
      return;
    }
    for (const listener of this.#listeners.get(head.t) ?? []) {
      try {
        listener(head as never, envelope.body);
      } catch (error) {
        this.#logger.error({ err: error, kind: head.t }, 'a listener of the primary failed');
      }
    }
  }

  #refused(): void {
    const now = Date.now();
    if (now - this.#refusedAt < 60_000) return;
    this.#refusedAt = now;
    this.#logger.warn('a message from the primary was refused (not of its shape or too large)');
  }
}
