import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  type ExecutionArgs,
  type DocumentNode as GraphQLDocument,
  GraphQLError,
  getOperationAST,
} from 'graphql';
import { CloseCode, handleProtocols, makeServer } from 'graphql-ws';
import type { Logger } from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';
import type { ErrorCode } from '../errors/error-code.js';
import { tooManySubscriptions } from '../errors/subscription-error.js';
import type { ConnectionSubscriptions } from '../subscriptions/subscription-registry.js';
import type { GatewayYoga } from './gateway-yoga.js';
import { requestIdOf } from './request-id.js';

export interface WebSocketTransportOptions {
  readonly yoga: GatewayYoga;
  /** The GraphQL endpoint: the only path that upgrades. */
  readonly path: string;
  /** How often each socket is pinged; one without a pong by the next ping is terminated. */
  readonly keepAliveMs: number;
  /** The largest message a client may send (`MAX_BODY_BYTES`). */
  readonly maxPayloadBytes: number;
  /**
   * Operations one socket may run at once, queries and subscriptions together
   * (`MAX_SUBSCRIPTIONS_PER_CONNECTION`): over HTTP a connection runs one at a time.
   */
  readonly maxOperations: number;
  /**
   * Origins besides the gateway's own whose pages may open a socket (`CORS_ORIGINS`). A browser
   * opens a WebSocket to any site, with its cookies, and no CORS preflight guards it.
   */
  readonly allowedOrigins: readonly string[];
  readonly logger: Logger;
}

/** The front door of WebSockets: the server's `upgrade` listener, and its shutdown. */
export interface WebSocketTransport {
  /** The node:http server's `upgrade` listener. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Sockets open now. */
  readonly size: number;
  /**
   * Refuses new sockets and closes the open ones with 1001 (going away), each once the operations
   * it holds have sent `complete` (end the subscriptions first), or after `graceMs`.
   */
  close(graceMs?: number): Promise<void>;
}

/** What a socket's operations share, as graphql-ws carries it. */
interface SocketExtra {
  readonly socket: WebSocket;
  readonly requestId: string;
  /** The upgrade request as Yoga's context reads a request: headers, for the session and id. */
  readonly request: Request;
  readonly req: IncomingMessage;
  readonly connection: ConnectionSubscriptions;
}

/** What `onSubscribe` puts in `rootValue`: the enveloped executors, with every Yoga plugin. */
interface EnvelopedRoot {
  execute(args: ExecutionArgs): unknown;
  subscribe(args: ExecutionArgs): unknown;
}

/**
 * GraphQL over WebSocket (graphql-ws's `graphql-transport-ws` protocol) on the GraphQL endpoint
 * of the same port. Each operation runs through Yoga's envelop, so parsing and validation bear
 * the same limits as HTTP (GraphQL Armor, introspection), execution the same field budget and
 * masking, and the context is built by the same factory. Queries and subscriptions are served;
 * mutations are not, since the verification session travels in a cookie a socket cannot set.
 * Sockets from a page of another origin than the gateway's and `allowedOrigins` are refused.
 */
export function createWebSocketTransport(options: WebSocketTransportOptions): WebSocketTransport {
  const { yoga, path, keepAliveMs, maxPayloadBytes, maxOperations, allowedOrigins, logger } =
    options;
  const sockets = new Map<WebSocket, { operations: () => number }>();
  let closing = false;

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: maxPayloadBytes,
    handleProtocols: (protocols) => handleProtocols(protocols),
  });

  const server = makeServer<Record<string, unknown> | undefined, SocketExtra>({
    execute: (args) => (args.rootValue as EnvelopedRoot).execute(args) as never,
    subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args) as never,
    onSubscribe: async (ctx, _id, payload) => {
      const { request, req, connection } = ctx.extra;
      // This operation is among them already.
      if (Object.keys(ctx.subscriptions).length > maxOperations) {
        return [tooManySubscriptions('MAX_SUBSCRIPTIONS_PER_CONNECTION', maxOperations)];
      }
      const enveloped = yoga.getEnveloped({
        request,
        req,
        params: payload,
        subscriber: { transport: 'websocket', connection },
      } as never);
      let document: GraphQLDocument;
      try {
        document = enveloped.parse(payload.query);
      } catch (error) {
        if (error instanceof GraphQLError) return [error];
        throw error;
      }
      const errors = enveloped.validate(enveloped.schema, document);
      if (errors.length > 0) return errors;
      if (getOperationAST(document, payload.operationName)?.operation === 'mutation') {
        return [
          refusal(
            'BAD_REQUEST',
            'Send mutations over HTTP (POST /graphql): a WebSocket serves queries and subscriptions.',
          ),
        ];
      }
      return {
        schema: enveloped.schema,
        document,
        operationName: payload.operationName,
        variableValues: payload.variables,
        contextValue: await enveloped.contextFactory(),
        rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
      };
    },
  });

  function open(socket: WebSocket, req: IncomingMessage, requestId: string) {
    const started = performance.now();
    const extra: SocketExtra = {
      socket,
      requestId,
      req,
      request: fetchRequestOf(req, requestId),
      connection: { open: 0 },
    };
    let operations = 0;
    sockets.set(socket, { operations: () => operations });
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            // A failed send means the socket is going: its close is handled below.
            socket.send(data, () => resolve());
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', async (data) => {
            operations += 1;
            try {
              await handle(String(data));
            } catch (error) {
              logger.error({ err: error, requestId }, 'a WebSocket message failed');
              socket.close(CloseCode.InternalServerError, 'Internal server error');
            } finally {
              operations -= 1;
            }
          }),
      },
      extra,
    );

    let alive = true;
    socket.on('pong', () => {
      alive = true;
    });
    const ping = setInterval(() => {
      if (!alive) return socket.terminate();
      alive = false;
      socket.ping();
    }, keepAliveMs);
    ping.unref();

    // Invalid frames, oversized messages: ws closes the socket itself (1002, 1009).
    socket.on('error', (error) => logger.debug({ err: error, requestId }, 'WebSocket error'));
    socket.once('close', (code, reason) => {
      clearInterval(ping);
      sockets.delete(socket);
      void closed(code, reason.toString());
      logger.info(
        {
          requestId,
          path,
          transport: 'websocket',
          code,
          ms: Math.round(performance.now() - started),
        },
        'websocket closed',
      );
    });
    logger.info({ requestId, path, transport: 'websocket' }, 'websocket opened');
  }

  return {
    upgrade(req, socket, head) {
      const requestId = requestIdOf(req.headers['x-request-id']);
      socket.on('error', () => socket.destroy());
      const refuse = (status: number, code: ErrorCode, message: string) => {
        logger.info({ requestId, path: req.url, status, code }, 'websocket refused');
        refuseUpgrade(socket, status, requestId, code, message);
      };
      const host = req.headers.host;
      if (host === undefined || !URL.canParse(`http://${host}/`)) {
        return refuse(400, 'BAD_REQUEST', 'The Host header is not a valid host.');
      }
      if (new URL(req.url ?? '/', `http://${host}`).pathname !== path) {
        return refuse(404, 'BAD_REQUEST', `WebSockets are served at ${path} only.`);
      }
      const origin = req.headers.origin;
      if (origin !== undefined && !isAllowedOrigin(origin, host, allowedOrigins)) {
        return refuse(
          403,
          'CSRF_BLOCKED',
          'This WebSocket was refused: pages of this origin may not open one to the gateway (CORS_ORIGINS).',
        );
      }
      if (closing) return refuse(503, 'BAD_REQUEST', 'The gateway is shutting down.');
      wss.handleUpgrade(req, socket, head, (ws) => open(ws, req, requestId));
    },
    get size() {
      return sockets.size;
    },
    async close(graceMs = 1_000) {
      closing = true;
      const deadline = Date.now() + graceMs;
      await Promise.all(
        [...sockets].map(async ([socket, state]) => {
          while (state.operations() > 0 && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          socket.close(1001, 'Going away');
        }),
      );
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/** Whether a page of `origin` may open a socket: the gateway's own origin, or an allowed one. */
function isAllowedOrigin(origin: string, host: string, allowed: readonly string[]): boolean {
  if (!URL.canParse(origin)) return false;
  const url = new URL(origin);
  return url.host === host || allowed.some((entry) => new URL(entry).origin === url.origin);
}

const refusal = (code: ErrorCode, message: string) =>
  new GraphQLError(message, { extensions: { code } });

/** Answers an upgrade request with an HTTP error and closes the socket. */
function refuseUpgrade(
  socket: Duplex,
  status: number,
  requestId: string,
  code: ErrorCode,
  message: string,
) {
  const body = JSON.stringify({ errors: [{ message, extensions: { code } }] });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${requestId}\r\n\r\n${body}`,
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  503: 'Service Unavailable',
};

/** Hop-by-hop and handshake headers: no Fetch request carries them. */
const HANDSHAKE_HEADERS =
  /^(connection|upgrade|sec-websocket-.*|host|keep-alive|transfer-encoding)$/;

/** The upgrade request as a Fetch request, for the context factory (cookies, request id). */
function fetchRequestOf(req: IncomingMessage, requestId: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HANDSHAKE_HEADERS.test(name)) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  headers.set('x-request-id', requestId);
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { headers });
}
