import { type JsonBudget, JsonBudgetExceeded, parseJsonWithin } from '../json-budget.js';

/** Why a message closes its socket (with 4400, bad request): the reason the client gets. */
export class MessageRefusal {
  constructor(readonly reason: string) {}
}

/**
 * The largest `connection_init` message. The gateway reads nothing of its payload (the session
 * travels in the handshake's cookie), so a larger one is refused rather than kept for the socket's
 * life.
 */
const MAX_INIT_BYTES = 4_096;

/**
 * The `query` a subscribe message's payload carried when it was not a string: graphql-ws refuses
 * such a message outright, yet GraphQL over HTTP's `documentId` and APQ's hash-only requests send
 * none. The payload goes to graphql-ws with an empty query, and `paramsOf` gives Yoga the original.
 */
const sentQueries = new WeakMap<object, unknown>();

/**
 * Reads one message of a socket, parsed once, here, within the budget a request body has:
 * graphql-ws is given the object.
 */
export function readClientMessage(
  data: string,
  budget: JsonBudget,
): Record<string, unknown> | MessageRefusal {
  let message: unknown;
  try {
    message = parseJsonWithin(data, budget);
  } catch (error) {
    if (error instanceof JsonBudgetExceeded) {
      return new MessageRefusal(`JSON_TOO_COMPLEX: ${error.message}`);
    }
    // Refused below, as any message that is not an object.
  }
  if (!isObject(message)) return new MessageRefusal('Invalid message received');
  const { type, payload } = message;
  if (type === 'connection_init') {
    if (Buffer.byteLength(data) > MAX_INIT_BYTES) {
      return new MessageRefusal(
        `connection_init larger than ${MAX_INIT_BYTES} bytes: the gateway reads no payload`,
      );
    }
    return { type };
  }
  if (type === 'subscribe' && isObject(payload)) {
    if (typeof payload.query !== 'string') {
      sentQueries.set(payload, payload.query);
      payload.query = '';
    }
  }
  return message;
}

/** A subscribe message's payload as the client sent it: Yoga's request parameters. */
export function paramsOf<Payload extends object>(payload: Payload): Payload {
  if (!sentQueries.has(payload)) return payload;
  return { ...payload, query: sentQueries.get(payload) ?? undefined };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
