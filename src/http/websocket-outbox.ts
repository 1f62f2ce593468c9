import type { WebSocket } from 'ws';

/**
 * What one queued message costs besides its bytes: the pending write, its frame header, the
 * promise graphql-ws awaits and its handler's state. Counted so that a flood of tiny messages
 * (pongs) is bounded as surely as a few large ones.
 */
export const MESSAGE_OVERHEAD_BYTES = 512;

/** Above this many queued bytes, the socket's reads pause until its writes drain. */
export const PAUSE_READING_BYTES = 64 * 1024;

/** The close code of a socket whose client does not read what it is sent (policy violation). */
export const OUTBOX_OVERFLOW_CLOSE_CODE = 1008;

export interface WebSocketOutboxOptions {
  /**
   * Bytes one socket may have waiting to be written (`WEBSOCKET_MAX_BUFFERED_BYTES`), each
   * message counted with `MESSAGE_OVERHEAD_BYTES`. A message always fits an empty outbox, so an
   * answer larger than this still goes out to a client that reads.
   * @default 1048576 (1 MiB)
   */
  readonly maxBytes?: number;
  /**
   * What every socket's outbox together may hold (`OutboxBudget`): a crowd of slow readers is
   * bounded as one is.
   */
  readonly budget?: OutboxBudget;
  /** Called once the outbox would go past `maxBytes` or the shared budget: the client is not reading. */
  readonly onOverflow: () => void;
}

/**
 * Bytes that all the sockets of a replica may have waiting to be written, together: each
 * socket's own bound times the sockets allowed would be far more than the heap holds.
 */
export class OutboxBudget {
  readonly #maxBytes: number;
  #usedBytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes taken now. */
  get usedBytes(): number {
    return this.#usedBytes;
  }

  /** Takes `bytes` when they fit; `false` when they would go past the budget. */
  take(bytes: number): boolean {
    if (this.#usedBytes + bytes > this.#maxBytes) return false;
    this.#usedBytes += bytes;
    return true;
  }

  give(bytes: number): void {
    this.#usedBytes -= bytes;
  }
}

/**
 * Everything one socket sends, bounded: what the client has not read yet stays in the process, so
 * a client that stops reading while it sends (pings that each get a pong) or while its
 * subscriptions produce events must not hold more than `maxBytes`. Past `PAUSE_READING_BYTES`
 * queued, the socket's reads pause until its writes drain (a client that floods while not reading
 * stalls itself, and no pong it answers is read either, so the keep-alive ends it); past
 * `maxBytes`, `onOverflow` closes the socket.
 */
export class WebSocketOutbox {
  readonly #socket: WebSocket;
  readonly #maxBytes: number;
  readonly #onOverflow: () => void;
  readonly #budget: OutboxBudget | undefined;
  #queuedBytes = 0;
  #paused = false;
  #overflowed = false;

  constructor(
    socket: WebSocket,
    { maxBytes = 1_048_576, budget, onOverflow }: WebSocketOutboxOptions,
  ) {
    this.#socket = socket;
    this.#budget = budget;
    this.#maxBytes = maxBytes;
    this.#onOverflow = onOverflow;
  }

  /** Bytes waiting to be written, overhead included. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Whether the socket's reads are paused until its writes drain. */
  get readingPaused(): boolean {
    return this.#paused;
  }

  /** Queues `data`; resolves once it is written, or at once when the socket is going. */
  send(data: string): Promise<void> {
    const socket = this.#socket;
    if (socket.readyState !== socket.OPEN || this.#overflowed) return Promise.resolve();
    const cost = Buffer.byteLength(data) + MESSAGE_OVERHEAD_BYTES;
    if (
      (this.#queuedBytes > 0 && this.#queuedBytes + cost > this.#maxBytes) ||
      (this.#budget !== undefined && !this.#budget.take(cost))
    ) {
      this.#overflowed = true;
      this.#onOverflow();
      return Promise.resolve();
    }
    this.#queuedBytes += cost;
    if (!this.#paused && this.#queuedBytes > PAUSE_READING_BYTES) {
      this.#paused = true;
      socket.pause();
    }
    return new Promise<void>((resolve) => {
      // A failed write means the socket is going: its close is handled by the transport.
      socket.send(data, () => {
        this.#queuedBytes -= cost;
        this.#budget?.give(cost);
        if (this.#paused && this.#queuedBytes <= PAUSE_READING_BYTES / 2) {
          this.#paused = false;
          socket.resume();
        }
        resolve();
      });
    });
  }
}
