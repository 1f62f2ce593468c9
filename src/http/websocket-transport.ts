import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { getHeapStatistics } from 'node:v8';
import { type WebSocket, WebSocketServer } from 'ws';
import { type RawRefusal, rawRefusal, shuttingDown } from '../errors/refusal.js';
import type { JsonBudget } from '../json-budget.js';
import { requestPath } from '../observability/route.js';
import { ClientCounts } from '../subscriptions/client-counts.js';
import { clientAddressOf } from './client-address.js';
import { sessionOf } from './event-streams.js';
import { fetchRequestOf } from './fetch-request.js';
import { writeRawRefusal } from './raw-refusal.js';
import { requestIdOf } from './request-id.js';
import { createWebSocketOutboxes } from './websocket-outbox.js';
import {
  CLOSE,
  createWebSocketProtocol,
  type WebSocketProtocolOptions,
} from './websocket-protocol.js';

/** The subprotocol of GraphQL over WebSocket (graphql-ws's PROTOCOL.md). */
const SUBPROTOCOL = 'graphql-transport-ws';

export interface WebSocketTransportOptions extends WebSocketProtocolOptions {
  /** The GraphQL endpoint: the only path that upgrades. */
  readonly path: string;
  /** How often each socket is pinged; one without a pong by the next ping is terminated. */
  readonly keepAliveMs: number;
  /** The largest message a client may send (`MAX_BODY_BYTES`). */
  readonly maxPayloadBytes: number;
  /** What a message may hold once parsed, as a request body (`MAX_JSON_VALUES`, `MAX_JSON_DEPTH`). */
  readonly json: JsonBudget;
  /**
   * WebSockets open at once (`MAX_WEBSOCKETS`): fewer than the server's `maxConnections`, so that
   * HTTP (`/health`, `/readiness`, queries) keeps connections however many sockets are open.
   */
  readonly maxSockets: number;
  /** WebSockets one client may hold open at once (`MAX_WEBSOCKETS_PER_CLIENT`). */
  readonly maxSocketsPerClient: number;
  /** Proxies whose `X-Forwarded-For` names the client (`TRUSTED_PROXIES`), as limits read it. */
  readonly trustedProxies: number;
  /**
   * A socket with no operation running for this long is closed with 1000 (`WEBSOCKET_IDLE_TIMEOUT_MS`);
   * checked at each keep-alive ping. Its pings do not count: they keep it alive, not busy.
   */
  readonly idleTimeoutMs: number;
  /**
   * Bytes one socket may have waiting to be sent (`WEBSOCKET_MAX_BUFFERED_BYTES`); past it the
   * socket is closed with 1008 (see `createWebSocketOutboxes`).
   */
  readonly maxBufferedBytes: number;
  /**
   * Bytes all sockets together may have waiting to be sent; a socket whose next message would go
   * past it is closed as one that does not read (1008).
   * @default a quarter of V8's heap limit (`--max-old-space-size`)
   */
  readonly maxTotalBufferedBytes?: number;
  /**
   * Origins besides the gateway's own whose pages may open a socket (`CORS_ORIGINS`). A browser
   * opens a WebSocket to any site, with its cookies, and no CORS preflight guards it.
   */
  readonly allowedOrigins: readonly string[];
}

/**
 * GraphQL over WebSocket (the `graphql-transport-ws` protocol, `createWebSocketProtocol`) on the
 * GraphQL endpoint of the same port. Each operation runs through Yoga as an HTTP request's
 * parameters do, so persisted documents, limits, masking and errors are the same
 * on every transport. Queries and subscriptions are served; mutations are refused as over GET,
 * since the verification session travels in a cookie a socket cannot set. Sockets from a page of
 * another origin than the gateway's and `allowedOrigins` are refused. What a socket holds is
 * bounded: sockets per client and in total, the `connection_init` it sends, what it has not read
 * yet, and how long it may stay open with nothing to do.
 */
export function createWebSocketTransport(options: WebSocketTransportOptions) {
  const {
    path,
    keepAliveMs,
    maxPayloadBytes,
    trustedProxies,
    idleTimeoutMs,
    maxBufferedBytes,
    maxTotalBufferedBytes = Math.floor(getHeapStatistics().heap_size_limit / 4),
    allowedOrigins,
    logger,
  } = options;
  /** The open sockets, each with how many operations it runs. */
  const sockets = new Map<WebSocket, () => number>();
  const slots = new ClientCounts();
  const outboxOf = createWebSocketOutboxes(maxBufferedBytes, maxTotalBufferedBytes);
  let closing = false;

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: maxPayloadBytes,
    handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });

  const protocol = createWebSocketProtocol(options);

  function open(socket: WebSocket, req: IncomingMessage, requestId: string, client: string) {
    const started = performance.now();
    const logged = { requestId, path, transport: 'websocket' };
    const outbox = outboxOf(socket, (queuedBytes) =>
      logger.info(
        { requestId, queuedBytes },
        'websocket closed: the client does not read what it is sent',
      ),
    );
    const session = protocol({
      requestId,
      req,
      clientAddress: client,
      session: sessionOf(req.headers.cookie),
      requestOf: (params, signal) => {
        const request = fetchRequestOf(req, {
          without: HANDSHAKE_HEADERS,
          requestId,
          signal,
          url: `${path}?${params}`,
        });
        request.headers.set('accept', 'text/event-stream');
        return request;
      },
      send: (data) => void outbox.send(data),
      close: (code, reason) => socket.close(code, reason),
    });
    sockets.set(socket, session.operations);
    if (socket.protocol !== SUBPROTOCOL) {
      socket.close(CLOSE.SUBPROTOCOL_NOT_ACCEPTABLE, 'Subprotocol not acceptable');
    }
    socket.on('message', (data) => {
      try {
        session.message(String(data));
      } catch (error) {
        // The gateway's own fault, not the client's: what the client sent was checked first.
        logger.error({ err: error, requestId }, 'a WebSocket message failed');
        socket.close(CLOSE.INTERNAL_ERROR, 'Internal server error');
      }
    });

    let alive = true;
    socket.on('pong', () => {
      alive = true;
    });
    const ping = setInterval(() => {
      if (!alive) return socket.terminate();
      const idleSince = session.idleSince();
      if (idleSince !== undefined && performance.now() - idleSince >= idleTimeoutMs) {
        return socket.close(1000, `Idle: no operation for ${idleTimeoutMs} ms`);
      }
      alive = false;
      socket.ping();
    }, keepAliveMs);
    ping.unref();

    // Invalid frames, oversized messages: ws closes the socket itself (1002, 1009).
    socket.on('error', (error) => logger.debug({ err: error, requestId }, 'WebSocket error'));
    socket.once('close', (code) => {
      clearInterval(ping);
      outbox.dispose();
      sockets.delete(socket);
      session.closed();
      logger.info(
        { ...logged, code, ms: Math.round(performance.now() - started) },
        'websocket closed',
      );
    });
    logger.info(logged, 'websocket opened');
  }

  return {
    /** The node:http server's `upgrade` listener. */
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
      const requestId = requestIdOf(req.headers['x-request-id']);
      socket.on('error', () => socket.destroy());
      const refuse = (refused: RawRefusal) => {
        const { status, error } = refused;
        logger.info(
          { requestId, path: requestPath(req.url), status, ...error.extensions },
          'websocket refused',
        );
        writeRawRefusal(socket, refused, requestId);
      };
      const host = req.headers.host;
      if (host === undefined || !URL.canParse(`http://${host}/`)) {
        return refuse(rawRefusal(400, 'BAD_REQUEST', 'The Host header is not a valid host.'));
      }
      if (new URL(req.url ?? '/', `http://${host}`).pathname !== path) {
        return refuse(rawRefusal(404, 'BAD_REQUEST', `WebSockets are served at ${path} only.`));
      }
      const origin = req.headers.origin;
      if (origin !== undefined && !isAllowedOrigin(origin, host, allowedOrigins)) {
        return refuse(
          rawRefusal(
            403,
            'CSRF_BLOCKED',
            'This WebSocket was refused: pages of this origin may not open one to the gateway (CORS_ORIGINS).',
          ),
        );
      }
      if (closing) return refuse(shuttingDown);
      const client = clientAddressOf(req, trustedProxies);
      if (slots.of(client) >= options.maxSocketsPerClient) {
        return refuse(
          rawRefusal(
            429,
            'TOO_MANY_WEBSOCKETS',
            'This client holds as many WebSockets as one client may. Close one: a socket carries many operations.',
            { extensions: { limit: 'MAX_WEBSOCKETS_PER_CLIENT' } },
          ),
        );
      }
      if (slots.total >= options.maxSockets) {
        return refuse(
          rawRefusal(
            503,
            'TOO_MANY_WEBSOCKETS',
            'The gateway holds as many WebSockets as it allows. Retry later, or use SSE.',
            { extensions: { limit: 'MAX_WEBSOCKETS' } },
          ),
        );
      }
      // Taken before the handshake and given back when the connection closes, however it ends.
      socket.once('close', slots.add(client));
      wss.handleUpgrade(req, socket, head, (ws) => open(ws, req, requestId, client));
    },
    /**
     * Refuses new sockets and closes the open ones with 1001 (going away), each once the
     * operations it holds have sent `complete` (end the subscriptions first), or after `graceMs`.
     */
    async close(graceMs = 1_000): Promise<void> {
      closing = true;
      const deadline = Date.now() + graceMs;
      await Promise.all(
        [...sockets].map(async ([socket, operations]) => {
          while (operations() > 0 && Date.now() < deadline) {
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

/** Hop-by-hop and handshake headers: no Fetch request carries them. */
const HANDSHAKE_HEADERS =
  /^(connection|upgrade|sec-websocket-.*|host|keep-alive|transfer-encoding)$/;
