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

/** How long a socket closed for not reading gets for its close handshake before it is cut. */
const OVERFLOW_CLOSE_GRACE_MS = 1_000;

/**
 * The outboxes of a replica's sockets. One socket may have `maxBytes` waiting to be written
 * (`WEBSOCKET_MAX_BUFFERED_BYTES`), each message counted with `MESSAGE_OVERHEAD_BYTES`, before
 * its client has `STALL_MS` to read; all of them together `maxTotalBytes`, so that a crowd of slow
 * readers is bounded as one is: each socket's own bound times the sockets allowed would be far
 * more than the heap holds.
 */
export function createWebSocketOutboxes(maxBytes: number, maxTotalBytes: number) {
  let totalBytes = 0;

  /**
   * Everything one socket sends, bounded: what the client has not read yet stays in the process,
   * so a client that stops reading while it sends (pings that each get a pong) or while its
   * subscriptions produce events must not hold more than `maxBytes`. Past `PAUSE_READING_BYTES`
   * queued, the socket's reads pause until its writes drain (a client that floods while not
   * reading stalls itself, and no pong it answers is read either, so the keep-alive ends it). Past
   * `maxBytes`, the socket has `STALL_MS` to write something: a burst the server made itself
   * (twenty subscriptions' first events queued in one turn) drains at once for a client that
   * reads, while one that does not is closed with 1008, once `onOverflow` has heard of it. What
   * may queue meanwhile is bounded all the same: graphql-ws sends an operation's next event only
   * once its last is written, reads are paused, and every byte counts towards `maxTotalBytes`,
   * past which the socket is closed at once.
   */
  return function outboxOf(socket: WebSocket, onOverflow: (queuedBytes: number) => void) {
    let queuedBytes = 0;
    let overflowed = false;
    /** Armed while more than `maxBytes` waits; a write that completes meanwhile is progress. */
    let stall: NodeJS.Timeout | undefined;
    let progressed = false;

    function watchStall(): void {
      if (stall) return;
      progressed = false;
      stall = setTimeout(() => {
        stall = undefined;
        if (queuedBytes <= maxBytes) return;
        if (progressed) watchStall();
        else overflow();
      }, STALL_MS);
      stall.unref();
    }

    function unwatchStall(): void {
      clearTimeout(stall);
      stall = undefined;
    }

    function overflow(): void {
      unwatchStall();
      if (overflowed) return;
      overflowed = true;
      onOverflow(queuedBytes);
      socket.close(1008, 'Not reading: too much waiting to be sent');
      // A client that reads nothing will not read the close frame either.
      setTimeout(() => socket.terminate(), OVERFLOW_CLOSE_GRACE_MS).unref();
    }

    return {
      /** Queues `data`; resolves once it is written, or at once when the socket is going. */
      send(data: string): Promise<void> {
        if (socket.readyState !== socket.OPEN || overflowed) return Promise.resolve();
        const cost = Buffer.byteLength(data) + MESSAGE_OVERHEAD_BYTES;
        if (totalBytes + cost > maxTotalBytes) {
          overflow();
          return Promise.resolve();
        }
        totalBytes += cost;
        queuedBytes += cost;
        if (!socket.isPaused && queuedBytes > PAUSE_READING_BYTES) socket.pause();
        if (queuedBytes > maxBytes) watchStall();
        return new Promise<void>((resolve) => {
          // A failed write means the socket is going: its close is handled by the transport.
          socket.send(data, () => {
            queuedBytes -= cost;
            totalBytes -= cost;
            progressed = true;
            if (queuedBytes <= maxBytes) unwatchStall();
            if (socket.isPaused && queuedBytes <= PAUSE_READING_BYTES / 2) socket.resume();
            resolve();
          });
        });
      },
      /** Ends the wait for progress: the socket is going. */
      dispose: unwatchStall,
    };
  };
}
