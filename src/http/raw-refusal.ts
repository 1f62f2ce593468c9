import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** A GraphQL error as the gateway's refusals carry it: a message and its code. */
export interface RawRefusalError {
  readonly message: string;
  readonly extensions: { readonly code: string } & Record<string, unknown>;
}

/**
 * Answers on a bare socket, before any request object exists (a WebSocket handshake refused, a
 * request node's parser could not read), with the same JSON error body as every other refusal,
 * and closes the connection.
 */
export function writeRawRefusal(
  socket: Duplex,
  status: number,
  error: RawRefusalError,
  requestId?: string,
): void {
  const body = JSON.stringify({ errors: [error] });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      (requestId === undefined ? '' : `x-request-id: ${requestId}\r\n`) +
      `\r\n${body}`,
  );
}
