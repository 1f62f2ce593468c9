import type { IncomingMessage } from 'node:http';
import {
  type ExecutionArgs,
  type ExecutionResult,
  type FormattedExecutionResult,
  GraphQLError,
  type GraphQLFormattedError,
  parse,
} from 'graphql';
import { makeServer, type ServerOptions } from 'graphql-ws';
import { isAsyncIterable } from 'graphql-yoga';
import type { Logger } from 'pino';
import { tooManySubscriptions } from '../errors/subscription-error.js';
import type { ConnectionSubscriptions } from '../subscriptions/subscription-registry.js';
import type { GatewayYoga } from './gateway-yoga.js';
import { paramsOf } from './websocket-client-message.js';

/** What a socket's operations share, as graphql-ws carries it. */
export interface SocketExtra {
  readonly requestId: string;
  /** The upgrade request as Yoga reads a request: headers for the session and the request id. */
  readonly request: Request;
  readonly req: IncomingMessage;
  readonly connection: ConnectionSubscriptions;
}

export interface GraphQLWebSocketServerOptions {
  readonly yoga: GatewayYoga;
  /** Operations one socket may run at once (`MAX_SUBSCRIPTIONS_PER_CONNECTION`). */
  readonly maxOperations: number;
  /**
   * Time a socket gets to send `connection_init` before it is closed with 4408.
   * @default 3000
   */
  readonly connectionInitWaitMs?: number;
  readonly logger: Logger;
}

/** What `onSubscribe` hands graphql-ws: the result Yoga has already produced. */
interface ProducedRoot {
  readonly result: ExecutionResult | AsyncIterable<ExecutionResult>;
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
export function createGraphQLWebSocketServer(options: GraphQLWebSocketServerOptions) {
  const { yoga, maxOperations, connectionInitWaitMs = 3_000, logger } = options;
  const serverOptions: ServerOptions<Record<string, unknown> | undefined, SocketExtra> = {
    connectionInitWaitTimeout: connectionInitWaitMs,
    execute: (args) => (args.rootValue as ProducedRoot).result as never,
    onSubscribe: async (ctx, _id, payload) => {
      // This operation is among them already.
      if (Object.keys(ctx.subscriptions).length > maxOperations) {
        return [tooManySubscriptions('MAX_SUBSCRIPTIONS_PER_CONNECTION', maxOperations)];
      }
      const { request, req, connection, requestId } = ctx.extra;
      let result: ExecutionResult | AsyncIterable<ExecutionResult> | undefined;
      try {
        result = await yoga.getResultForParams({ params: paramsOf(payload) as never, request }, {
          req,
          subscriber: { transport: 'websocket', connection },
        } as never);
      } catch (error) {
        // An `onParams` refusal; HTTP's handler catches these the same way.
        if (error instanceof GraphQLError) return [error];
        logger.error({ err: error, requestId }, 'a WebSocket operation failed');
        return [new GraphQLError('Unexpected error.')];
      }
      if (result === undefined) return [new GraphQLError('Unexpected error.')];
      if (!isAsyncIterable(result) && result.errors?.length && !('data' in result)) {
        return result.errors.map(asGraphQLError);
      }
      const args: ExecutionArgs = {
        // graphql-ws reads no schema when the operation is executed already.
        schema: undefined as never,
        document: PRODUCED,
        rootValue: { result } satisfies ProducedRoot,
      };
      return args;
    },
    onNext: (_ctx, _id, _payload, _args, result) => withoutInternals(result),
    onError: (_ctx, _id, _payload, errors) => errors.map(formattedWithoutInternals),
  };
  return makeServer(serverOptions);
}

const asGraphQLError = (error: Error): GraphQLError =>
  error instanceof GraphQLError ? error : new GraphQLError(error.message, { originalError: error });

/** A result as HTTP answers it: Yoga's HTTP hints (`extensions.http`) are not the client's. */
function withoutInternals(result: ExecutionResult | FormattedExecutionResult) {
  const { errors, extensions, ...rest } = result;
  const { http: _http, ...ownExtensions } = (extensions ?? {}) as Record<string, unknown>;
  return {
    ...rest,
    ...(errors ? { errors: errors.map(formattedWithoutInternals) } : {}),
    ...(Object.keys(ownExtensions).length > 0 ? { extensions: ownExtensions } : {}),
  } as FormattedExecutionResult;
}

function formattedWithoutInternals(error: GraphQLError | GraphQLFormattedError) {
  const formatted: GraphQLFormattedError =
    error instanceof GraphQLError ? error.toJSON() : (error as GraphQLFormattedError);
  const { extensions, ...rest } = formatted;
  const {
    http: _http,
    unexpected: _unexpected,
    ...ownExtensions
  } = (extensions ?? {}) as Record<string, unknown>;
  return Object.keys(ownExtensions).length > 0 ? { ...rest, extensions: ownExtensions } : rest;
}
