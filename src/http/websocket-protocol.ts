import type { IncomingMessage } from 'node:http';
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { codedError } from '../errors/coded-error.js';
import { tooManySubscriptions } from '../errors/subscription-error.js';
import { type JsonBudget, JsonBudgetExceeded, parseJsonWithin } from '../json-budget.js';
import type { Sink, SourceStream, SubscriptionHub } from '../subscriptions/hub.js';
import { runSource, type WholeAnswer } from './event-streams.js';
import type { GatewayYoga } from './gateway-yoga.js';

/** How long a socket has to send `connection_init` before it is closed with 4408. */
const INIT_TIMEOUT_MS = 3_000;

/**
 * The largest `connection_init` message. The gateway reads nothing of its payload (the session
 * travels in the handshake's cookie), so a larger one is refused rather than kept.
 */
const MAX_INIT_BYTES = 4_096;

/**
 * The longest operation id. The protocol sets none, but each running operation keeps its id, and
 * every `next` message repeats it: up to `MAX_SUBSCRIPTIONS_PER_CONNECTION` ids of a whole
 * message each would be megabytes a socket. The official client's are UUIDs (36 characters).
 */
const MAX_ID_LENGTH = 256;

/** What a mutation sent over a socket is answered: it runs over HTTP POST only. */
const MUTATION_OVER_SOCKET = codedError(
  'BAD_REQUEST',
  'Mutations are not run over the WebSocket: send this one as an HTTP POST to /graphql (queries and subscriptions may use either).',
);

/** The close codes of the protocol (graphql-ws's PROTOCOL.md) the server sends. */
export const CLOSE = {
  BAD_REQUEST: 4400,
  UNAUTHORIZED: 4401,
  SUBPROTOCOL_NOT_ACCEPTABLE: 4406,
  INIT_TIMEOUT: 4408,
  SUBSCRIBER_EXISTS: 4409,
  TOO_MANY_INITS: 4429,
  INTERNAL_ERROR: 4500,
} as const;

/** What a socket's operations share. */
export interface Connection {
  readonly requestId: string;
  /** The upgrade request: its headers go with each operation's request (session, request id). */
  readonly req: IncomingMessage;
  /** The client as the rate limits know it (`clientAddressOf`). */
  readonly clientAddress: string;
  readonly session: string | undefined;
  /** Each operation's request to Yoga, for `params` (a GET: mutations are refused as over GET). */
  readonly requestOf: (params: URLSearchParams, signal: AbortSignal) => Request;
  /** Writes a message; the socket's outbox bounds what a client that does not read holds. */
  readonly send: (data: string) => void;
  readonly close: (code: number, reason: string) => void;
}

export interface WebSocketProtocolOptions {
  readonly hub: SubscriptionHub;
  readonly yoga: GatewayYoga;
  /** What a message may hold once parsed, as a request body (`MAX_JSON_VALUES`, `MAX_JSON_DEPTH`). */
  readonly json: JsonBudget;
  /**
   * Operations one socket may run at once, queries and subscriptions together
   * (`MAX_SUBSCRIPTIONS_PER_CONNECTION`): over HTTP a connection runs one at a time.
   */
  readonly maxOperations: number;
  readonly logger: Logger;
}

/**
 * GraphQL over WebSocket, the `graphql-transport-ws` protocol (graphql-ws's PROTOCOL.md), served
 * by the gateway itself: every operation is a sink of its topic in the hub, whose source runs
 * through Yoga as an HTTP request does (persisted documents and APQ, limits, masking), its
 * payloads written as `next` messages, the result's text made once for every socket. A message
 * the protocol does not name, or not shaped as it says, closes the socket with 4400.
 */
export function createWebSocketProtocol(options: WebSocketProtocolOptions) {
  const { hub, yoga, json, maxOperations, logger } = options;

  return function opened(connection: Connection) {
    const { send, close, requestId } = connection;
    /** Each running operation's end, by id. */
    const operations = new Map<string, () => void>();
    const subscriber = {
      requestId,
      transport: 'websocket' as const,
      clientAddress: connection.clientAddress,
      connection: { open: 0 },
    };
    let initialised = false;
    let idleSince: number | undefined = performance.now();
    const initTimeout = setTimeout(() => {
      if (!initialised) close(CLOSE.INIT_TIMEOUT, 'Connection initialisation timeout');
    }, INIT_TIMEOUT_MS);
    initTimeout.unref();

    function run(id: string, payload: Record<string, unknown>, alone = false): void {
      const prefix = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
      let done = false;
      let leave: ((reason: 'client') => void) | undefined;
      const finish = (message?: string) => {
        if (done) return;
        done = true;
        if (operations.get(id) === end) operations.delete(id);
        if (operations.size === 0) idleSince = performance.now();
        if (message !== undefined) send(message);
      };
      const next = (text: string) => {
        if (!done) send(`${prefix}${text}}`);
      };
      const complete = () => finish(`{"id":${JSON.stringify(id)},"type":"complete"}`);
      const error = (errors: readonly unknown[]) =>
        finish(JSON.stringify({ id, type: 'error', payload: errors }));
      /** One result: `next` and `complete`, or `error` when it has no data (it never ran). */
      const single = (text: string) => {
        let result: { data?: unknown; errors?: unknown[] };
        try {
          result = JSON.parse(text);
        } catch {
          return sink.fail(new Error(`not a GraphQL result: ${text.slice(0, 100)}`));
        }
        if ('data' in result) {
          next(text);
          complete();
        } else error(result.errors ?? []);
      };
      const sink: Sink = {
        begin: () => {},
        next: (payload) => next(payload.json),
        ping: () => {},
        complete,
        refuse: (refusal) => error([refusal.toJSON()]),
        answer: (answer) => {
          const whole = answer as WholeAnswer;
          // Yoga refuses a mutation outside a POST (405): its message speaks of HTTP methods.
          if (whole.status === 405) return error([MUTATION_OVER_SOCKET.toJSON()]);
          // Yoga answers an error it found before running anything (400) as an event too.
          const text = whole.body.toString();
          single(/^data: (.+)$/m.exec(text)?.[1] ?? text);
        },
        alone: (own) => (own ? void relay(own) : run(id, payload, true)),
        fail: (failure) => {
          logger.error({ err: failure, requestId }, 'a WebSocket operation failed');
          error([new GraphQLError('Unexpected error.').toJSON()]);
        },
      };
      /** An operation nobody shares (a query): its first result says whether it ran at all. */
      async function relay(own: SourceStream): Promise<void> {
        try {
          let first = true;
          for (let item = await own.payloads.next(); !item.done; item = await own.payloads.next()) {
            if (done) break;
            if (!item.value) continue;
            if (first && !('data' in JSON.parse(item.value.json))) return single(item.value.json);
            first = false;
            next(item.value.json);
          }
          complete();
        } catch (failure) {
          sink.fail(failure);
        } finally {
          own.stop();
        }
      }
      const end = () => {
        finish();
        leave?.('client');
      };
      operations.set(id, end);
      idleSince = undefined;
      leave = hub.join({
        params: payload,
        session: connection.session,
        subscriber,
        sink,
        alone,
        start: (topic) =>
          runSource(yoga, (signal) => connection.requestOf(searchOf(payload), signal), {
            req: connection.req,
            topic,
          }),
      });
    }

    return {
      /** Handles one message of the client. */
      message(data: string) {
        const message = readClientMessage(data, json);
        if (typeof message === 'string') return close(CLOSE.BAD_REQUEST, message);
        switch (message.type) {
          case 'connection_init':
            if (initialised) return close(CLOSE.TOO_MANY_INITS, 'Too many initialisation requests');
            initialised = true;
            clearTimeout(initTimeout);
            return send('{"type":"connection_ack"}');
          case 'ping':
            return send(JSON.stringify({ type: 'pong', payload: message.payload ?? undefined }));
          case 'pong':
            return;
          case 'subscribe': {
            const id = message.id as string;
            if (!initialised) return close(CLOSE.UNAUTHORIZED, 'Unauthorized');
            if (operations.has(id)) {
              return close(CLOSE.SUBSCRIBER_EXISTS, `Subscriber for ${id} already exists`);
            }
            if (operations.size >= maxOperations) {
              const refusal = tooManySubscriptions(
                'MAX_SUBSCRIPTIONS_PER_CONNECTION',
                maxOperations,
              );
              return send(JSON.stringify({ id, type: 'error', payload: [refusal.toJSON()] }));
            }
            return run(id, message.payload as Record<string, unknown>);
          }
          case 'complete':
            return operations.get(message.id as string)?.();
        }
      },
      /** When the socket began to run nothing (undefined while it runs an operation). */
      idleSince: () => idleSince,
      operations: () => operations.size,
      /** The socket closed: every operation ends. */
      closed(): void {
        clearTimeout(initTimeout);
        for (const end of [...operations.values()]) end();
        operations.clear();
      },
    };
  };
}

/** An operation's parameters as a GET request's: `query: ""` beside a `documentId` or hash is none. */
function searchOf(payload: Record<string, unknown>): URLSearchParams {
  const search = new URLSearchParams();
  const { query, documentId, operationName, variables, extensions } = payload;
  if (typeof query === 'string' && query !== '') search.set('query', query);
  else if (documentId === undefined && extensions == null) search.set('query', '');
  if (typeof documentId === 'string') search.set('documentId', documentId);
  if (typeof operationName === 'string') search.set('operationName', operationName);
  if (variables != null) search.set('variables', JSON.stringify(variables));
  if (extensions != null) search.set('extensions', JSON.stringify(extensions));
  return search;
}

type Message = { readonly type: string; readonly [field: string]: unknown };

/** What each message the client may send holds, beside `type`: anything else is refused. */
const SHAPES: Record<string, (message: Record<string, unknown>) => boolean> = {
  connection_init: ({ payload }) => isOptionalObject(payload),
  ping: ({ payload }) => isOptionalObject(payload),
  pong: ({ payload }) => isOptionalObject(payload),
  subscribe: ({ id, payload }) =>
    isId(id) &&
    isObject(payload) &&
    (payload.query === undefined || typeof payload.query === 'string') &&
    (payload.documentId === undefined || typeof payload.documentId === 'string') &&
    (payload.operationName == null || typeof payload.operationName === 'string') &&
    isOptionalObject(payload.variables) &&
    isOptionalObject(payload.extensions),
  complete: ({ id }) => isId(id),
};

/**
 * One message of a socket, parsed within the budget a request body has, and checked against the
 * protocol; a string is why it closes the socket (4400).
 */
export function readClientMessage(data: string, budget: JsonBudget): Message | string {
  let message: unknown;
  try {
    message = parseJsonWithin(data, budget);
  } catch (error) {
    if (error instanceof JsonBudgetExceeded) return `JSON_TOO_COMPLEX: ${error.message}`;
    return 'Invalid message received';
  }
  if (!isObject(message) || typeof message.type !== 'string') return 'Invalid message received';
  const shape = SHAPES[message.type];
  if (!shape) return `Unexpected message of type ${message.type.slice(0, 32)} received`;
  if (!shape(message)) return `Invalid ${message.type} message received`;
  if (message.type === 'connection_init' && Buffer.byteLength(data) > MAX_INIT_BYTES) {
    return `connection_init larger than ${MAX_INIT_BYTES} bytes: the gateway reads no payload`;
  }
  return message as Message;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isOptionalObject = (value: unknown) => value == null || isObject(value);
const isId = (value: unknown) =>
  typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH;
