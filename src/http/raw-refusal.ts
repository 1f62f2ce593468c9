import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawRefusal } from '../errors/refusal.js';

/**
 * Answers on a bare socket, before any request object exists (a WebSocket handshake refused, a
 * request node's parser could not read), with the same JSON error body as every other refusal,
 * and closes the connection.
 */
export function writeRawRefusal(
  socket: Duplex,
  { status, error, retryAfterSeconds }: RawRefusal,
  requestId?: string,
): void {
  const body = JSON.stringify({ errors: [error] });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      (retryAfterSeconds === undefined ? '' : `Retry-After: ${retryAfterSeconds}\r\n`) +
      (requestId === undefined ? '' : `x-request-id: ${requestId}\r\n`) +
      `\r\n${body}`,
  );
}
