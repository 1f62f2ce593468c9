import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

export interface RawSocket {
  readonly socket: Socket;
  /** Resolves when the server ends its side (a FIN). */
  readonly ended: Promise<unknown>;
  /** Resolves when the connection is gone. */
  readonly closed: Promise<unknown>;
  /** Everything received so far, as text. */
  received(): string;
  /** How the connection failed, if it did (a reset). */
  error(): NodeJS.ErrnoException | undefined;
}

/**
 * A raw TCP connection to the gateway at `origin`, for what no HTTP client sends: half a request,
 * bytes that are not HTTP, a request crossing a drain.
 */
export async function openRawSocket(origin: string): Promise<RawSocket> {
  const socket = connect(Number(new URL(origin).port), '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  let error: NodeJS.ErrnoException | undefined;
  socket.on('data', (chunk) => {
    received += String(chunk);
  });
  socket.on('error', (failure) => {
    error = failure;
  });
  const ended = once(socket, 'end');
  const closed = once(socket, 'close');
  return { socket, ended, closed, received: () => received, error: () => error };
}
