import { CloseCode } from 'graphql-ws';

/** A client message as graphql-ws's server reads it: parsed once, here. */
export type ClientMessage = Record<string, unknown> & { readonly type?: unknown };

/** Why a message closes its socket: the close code and reason the client gets. */
export class MessageRefusal {
  constructor(
    readonly code: number,
    readonly reason: string,
  ) {}
}

/**
 * The `query` a subscribe message's payload carried when it was not a string: graphql-ws refuses
 * such a message outright, yet GraphQL over HTTP's `documentId` and APQ's hash-only requests send
 * none. The payload goes to graphql-ws with an empty query, and `paramsOf` gives Yoga the original.
 */
const sentQueries = new WeakMap<object, unknown>();

/**
 * Reads one message of a socket. A `connection_init` larger than `maxInitBytes` is refused: the
 * gateway reads nothing of its payload (the session travels in the handshake's cookie), so its
 * payload is dropped rather than kept for the socket's life.
 */
export function readClientMessage(
  data: string,
  { maxInitBytes }: { maxInitBytes: number },
): ClientMessage | MessageRefusal {
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return refused(CloseCode.BadRequest, 'Invalid message received');
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return refused(CloseCode.BadRequest, 'Invalid message received');
  }
  const { type, payload } = message as ClientMessage;
  if (type === 'connection_init') {
    if (Buffer.byteLength(data) > maxInitBytes) {
      return refused(
        CloseCode.BadRequest,
        `connection_init larger than ${maxInitBytes} bytes: the gateway reads no payload`,
      );
    }
    return { type };
  }
  if (
    type === 'subscribe' &&
    typeof payload === 'object' &&
    payload !== null &&
    !Array.isArray(payload)
  ) {
    const { query } = payload as { query?: unknown };
    if (typeof query !== 'string') {
      sentQueries.set(payload, query);
      (payload as { query: string }).query = '';
    }
  }
  return message as ClientMessage;
}

/** A subscribe message's payload as the client sent it: Yoga's request parameters. */
export function paramsOf<Payload extends object>(payload: Payload): Payload {
  if (!sentQueries.has(payload)) return payload;
  return { ...payload, query: sentQueries.get(payload) ?? undefined };
}

const refused = (code: number, reason: string) => new MessageRefusal(code, reason);
