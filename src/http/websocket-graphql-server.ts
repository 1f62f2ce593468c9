import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  type ExecutionArgs,
  type ExecutionResult,
  type FormattedExecutionResult,
  GraphQLError,
  type GraphQLFormattedError,
  parse,
} from 'graphql';
import { makeServer, type Server } from 'graphql-ws';
import { isAsyncIterable } from 'graphql-yoga';
import type { Logger } from 'pino';
import { tooManySubscriptions } from '../errors/subscription-error.js';
import { ChangeStream } from '../subscriptions/change-stream.js';
import { serialisedOf } from '../subscriptions/shared-result.js';
import {
  SharedSubscriptions,
  type SharedSubscriptionsOptions,
} from '../subscriptions/shared-subscriptions.js';
import type {
  ConnectionSubscriptions,
  SharedSource,
} from '../subscriptions/subscription-registry.js';
import type { GatewayYoga } from './gateway-yoga.js';
import { paramsOf } from './websocket-client-message.js';

/** What a socket's operations share, as graphql-ws carries it. */
export interface SocketExtra {
  readonly requestId: string;
  /** The upgrade request as Yoga reads a request: headers for the session and the request id. */
  readonly request: Request;
  readonly req: IncomingMessage;
  readonly connection: ConnectionSubscriptions;
  /** The client as the rate limits know it (`clientAddressOf`). */
  readonly clientAddress: string;
  /**
   * What of the upgrade request an operation's answer depends on besides the operation (its
   * `Origin` and cookies): part of the key of the subscriptions its operations share.
   */
  readonly sharingKey: string;
  /** Writes to the socket as it is: a shared subscription's results are written here. */
  readonly send: (data: string) => void;
}

export interface GraphQLWebSocketServerOptions extends SharedSubscriptionsOptions {
  readonly yoga: GatewayYoga;
  /**
   * Operations one socket may run at once, queries and subscriptions together
   * (`MAX_SUBSCRIPTIONS_PER_CONNECTION`): over HTTP a connection runs one at a time.
   */
  readonly maxOperations: number;
  readonly logger: Logger;
}

/**
 * The document graphql-ws is given once Yoga has run the operation: graphql-ws only reads from it
 * that there is an operation, and `execute` below hands back Yoga's result, a stream or not.
 */
const PRODUCED = parse('{ __typename }');

/**
 * graphql-ws's server, each operation run by Yoga exactly as an HTTP request's parameters are
 * (`getResultForParams`): the same `onParams` hooks (persisted documents, APQ, parameter checks),
 * parsing and validation with their limits, the method rule (the handshake is a GET, so mutations
 * are refused as over GET), the context factory, execution and masking. Errors go out shaped as
 * HTTP shapes them: without Yoga's internal `extensions.http` and `extensions.unexpected`.
 */
export function createGraphQLWebSocketServer(
  options: GraphQLWebSocketServerOptions,
): Server<SocketExtra> {
  const { yoga, maxOperations, logger } = options;
  const sharedText = new SharedText();
  const shared = new SharedSubscriptions<ExecutionResult, undefined>(options);
  /** An `onParams` refusal, as HTTP's handler answers it; anything else is unexpected. */
  const refusalOf = (error: unknown): GraphQLError[] => {
    if (error instanceof GraphQLError) return [error];
    logger.error({ err: error }, 'a WebSocket operation failed');
    return [new GraphQLError('Unexpected error.')];
  };
  const server = makeServer<Record<string, unknown> | undefined, SocketExtra>({
    // Time a socket gets to send `connection_init` before it is closed with 4408.
    connectionInitWaitTimeout: 3_000,
    execute: (args) => (args.rootValue as { result: never }).result,
    onSubscribe: async (ctx, id, payload) => {
      // This operation is among them already.
      if (Object.keys(ctx.subscriptions).length > maxOperations) {
        return [tooManySubscriptions('MAX_SUBSCRIPTIONS_PER_CONNECTION', maxOperations)];
      }
      const { request, req, connection, requestId, clientAddress, sharingKey, send } = ctx.extra;
      const params = paramsOf(payload) as never;
      const run = (sharedBy?: SharedSource) =>
        yoga.getResultForParams({ params, request }, {
          req,
          subscriber: { transport: 'websocket', connection, sharedBy },
        } as never) as Promise<ExecutionResult | AsyncIterable<ExecutionResult> | undefined>;
      const key = `${sharingKey}\n${hash('sha256', JSON.stringify(payload), 'base64url')}`;
      return new Promise<ExecutionArgs | readonly GraphQLError[]>((resolve) => {
        // graphql-ws iterates nothing of a shared subscription (its results are written below):
        // this only ends, when the subscription does (graphql-ws then sends `complete`), or when
        // graphql-ws lets go first (the client completed it, or the socket closed).
        const operation = new ChangeStream({
          accept: () => false,
          backlog: 0,
          onEnd: (reason) => leave(reason),
        });
        const prefix = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
        const leave = shared.join(
          key,
          { requestId, transport: 'websocket', clientAddress, connection },
          {
            begin: () => resolve(produced(operation)),
            // One write per subscriber: the result's text is made once for them all; the socket's
            // outbox bounds what a client that does not read holds.
            next: (result) =>
              send(`${prefix}${serialisedOf(result) ?? JSON.stringify(withoutInternals(result))}}`),
            complete: () => operation.end('complete'),
            refuse: (error) => resolve([error]),
            answer: (answer) => resolve(argsOrErrors(answer as ExecutionResult | undefined)),
            alone: (own) =>
              resolve(own ? produced(iterableOf(own.items)) : run().then(argsOrErrors, refusalOf)),
            fail: (error) => resolve(refusalOf(error)),
          },
          async (sharedBy) => {
            const result = await run(sharedBy);
            if (!result || !isAsyncIterable(result)) return { kind: 'answer', answer: result };
            const items = result[Symbol.asyncIterator]();
            return {
              kind: 'stream',
              items,
              meta: undefined,
              isEvent: () => true,
              stop: () => void items.return?.(),
            };
          },
        );
      });
    },
    onNext: (_ctx, _id, _payload, _args, result) => {
      const text = serialisedOf(result);
      return text === undefined ? withoutInternals(result) : sharedText.standIn(text);
    },
    onError: (_ctx, _id, _payload, errors) => errors.map(formattedWithoutInternals),
  });
  return {
    opened: (socket, extra) =>
      server.opened({ ...socket, send: (data) => socket.send(sharedText.spliced(data)) }, extra),
  };
}

/**
 * Writes a shared subscription result's text (`sharedResult`: made once for all its subscribers)
 * into each `next` message as it is, rather than graphql-ws serialising the result again for
 * every subscriber. graphql-ws serialises its message and hands the text to the socket at once,
 * in one turn: the payload's stand-in serialises as `null` and leaves its text to be put in its
 * place by the `send` that follows.
 */
class SharedText {
  #pending: string | undefined;

  /** What graphql-ws is given as the payload of a `next` message that carries `text`. */
  standIn(text: string): FormattedExecutionResult {
    return {
      toJSON: () => {
        this.#pending = text;
        return null;
      },
    } as FormattedExecutionResult;
  }

  /** The message text graphql-ws made, with the shared text in its payload's place. */
  spliced(data: string): string {
    const text = this.#pending;
    if (text === undefined) return data;
    this.#pending = undefined;
    return data.endsWith(PAYLOAD_STAND_IN)
      ? `${data.slice(0, -PAYLOAD_STAND_IN.length)}"payload":${text}}`
      : data;
  }
}

/** How a `next` message with a stand-in payload ends: the payload is its last property. */
const PAYLOAD_STAND_IN = '"payload":null}';

/** What graphql-ws is handed for an operation Yoga has run: its result, or its errors alone. */
function argsOrErrors(
  result: ExecutionResult | AsyncIterable<ExecutionResult> | undefined,
): ExecutionArgs | GraphQLError[] {
  if (result === undefined) return [new GraphQLError('Unexpected error.')];
  if (!isAsyncIterable(result) && result.errors?.length && !('data' in result)) {
    return result.errors.map(asGraphQLError);
  }
  return produced(result);
}

/** What `onSubscribe` hands graphql-ws: the result Yoga has already produced, as its root. */
function produced(result: ExecutionResult | AsyncIterable<unknown>): ExecutionArgs {
  return {
    // graphql-ws reads no schema when the operation is executed already.
    schema: undefined as never,
    document: PRODUCED,
    rootValue: { result },
  };
}

const iterableOf = <Item>(iterator: AsyncIterator<Item>): AsyncIterableIterator<Item> =>
  Object.assign(iterator, {
    [Symbol.asyncIterator]() {
      return this;
    },
  }) as AsyncIterableIterator<Item>;

const asGraphQLError = (error: Error): GraphQLError =>
  error instanceof GraphQLError ? error : new GraphQLError(error.message, { originalError: error });

/** A result as HTTP answers it: without Yoga's internal extensions. */
function withoutInternals(result: ExecutionResult | FormattedExecutionResult) {
  const { errors, extensions, ...rest } = result;
  return {
    ...rest,
    ...(errors ? { errors: errors.map(formattedWithoutInternals) } : {}),
    ...ownExtensions(extensions),
  } as FormattedExecutionResult;
}

function formattedWithoutInternals(error: GraphQLError | GraphQLFormattedError) {
  const { extensions, ...rest } = error instanceof GraphQLError ? error.toJSON() : error;
  return { ...rest, ...ownExtensions(extensions) };
}

/** `extensions` without Yoga's HTTP hints (`http`) and its `unexpected` mark: not the client's. */
function ownExtensions(extensions: unknown): { extensions?: Record<string, unknown> } {
  const {
    http: _http,
    unexpected: _unexpected,
    ...own
  } = (extensions ?? {}) as Record<string, unknown>;
  return Object.keys(own).length > 0 ? { extensions: own } : {};
}
