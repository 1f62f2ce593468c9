import type { WebSocket } from 'ws';

/**
 * What one queued message costs besides its bytes: the pending write, its frame header, the
 * promise graphql-ws awaits and its handler's state. Counted so that a flood of tiny messages
 * (pongs) is bounded as surely as a few large ones.
 */
const MESSAGE_OVERHEAD_BYTES = 512;

/** Above this many queued bytes, the socket's reads pause until its writes drain. */
const PAUSE_READING_BYTES = 64 * 1024;

/**
 * How long more than `maxBytes` may wait without a single write completing before the client is
 * taken for one that does not read.
 */
const STALL_MS = 2_000;

export interface WebSocketOutboxOptions {
  /**
   * Bytes one socket may have waiting to be written (`WEBSOCKET_MAX_BUFFERED_BYTES`), each
   * message counted with `MESSAGE_OVERHEAD_BYTES`, before the client has `STALL_MS` to read; more
   * than this queued by the server in one burst still goes out to a client that reads.
   */
  readonly maxBytes: number;
  /** What every socket's outbox together may hold: a crowd of slow readers is bounded as one is. */
  readonly budget: OutboxBudget;
  /** Called once the client is taken for one that does not read (see `WebSocketOutbox`). */
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
 * stalls itself, and no pong it answers is read either, so the keep-alive ends it). Past
 * `maxBytes`, the socket has `STALL_MS` to write something: a burst the server made itself (twenty
 * subscriptions' first events queued in one turn) drains at once for a client that reads, while
 * one that does not is closed (`onOverflow`). What may queue meanwhile is bounded all the same:
 * graphql-ws sends an operation's next event only once its last is written, reads are paused,
 * and every byte is taken from the shared `budget`, past which the socket is closed at once.
 */
export class WebSocketOutbox {
  readonly #socket: WebSocket;
  readonly #maxBytes: number;
  readonly #onOverflow: () => void;
  readonly #budget: OutboxBudget;
  #queuedBytes = 0;
  #overflowed = false;
  /** Armed while more than `maxBytes` waits; a write that completes meanwhile is progress. */
  #stall: NodeJS.Timeout | undefined;
  #progressed = false;

  constructor(socket: WebSocket, { maxBytes, budget, onOverflow }: WebSocketOutboxOptions) {
    this.#socket = socket;
    this.#budget = budget;
    this.#maxBytes = maxBytes;
    this.#onOverflow = onOverflow;
  }

  /** Bytes waiting to be written, overhead included. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Queues `data`; resolves once it is written, or at once when the socket is going. */
  send(data: string): Promise<void> {
    const socket = this.#socket;
    if (socket.readyState !== socket.OPEN || this.#overflowed) return Promise.resolve();
    const cost = Buffer.byteLength(data) + MESSAGE_OVERHEAD_BYTES;
    if (!this.#budget.take(cost)) {
      this.#overflow();
      return Promise.resolve();
    }
    this.#queuedBytes += cost;
    if (!socket.isPaused && this.#queuedBytes > PAUSE_READING_BYTES) socket.pause();
    if (this.#queuedBytes > this.#maxBytes) this.#watchStall();
    return new Promise<void>((resolve) => {
      // A failed write means the socket is going: its close is handled by the transport.
      socket.send(data, () => {
        this.#queuedBytes -= cost;
        this.#budget.give(cost);
        this.#progressed = true;
        if (this.#queuedBytes <= this.#maxBytes) this.#unwatchStall();
        if (socket.isPaused && this.#queuedBytes <= PAUSE_READING_BYTES / 2) socket.resume();
        resolve();
      });
    });
  }

  /** Ends the wait for progress: nothing is over the bound any more, or the socket is going. */
  dispose(): void {
    this.#unwatchStall();
  }

  #watchStall(): void {
    if (this.#stall) return;
    this.#progressed = false;
    this.#stall = setTimeout(() => {
      this.#stall = undefined;
      if (this.#queuedBytes <= this.#maxBytes) return;
      if (this.#progressed) this.#watchStall();
      else this.#overflow();
    }, STALL_MS);
    this.#stall.unref();
  }

  #unwatchStall(): void {
    clearTimeout(this.#stall);
    this.#stall = undefined;
  }

  #overflow(): void {
    this.#unwatchStall();
    if (this.#overflowed) return;
    this.#overflowed = true;
    this.#onOverflow();
  }
}
