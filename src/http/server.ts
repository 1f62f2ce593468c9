import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type RequestListener,
  type Server,
  ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';
import type { Config } from '../config.js';

/** How often a draining server closes the connections its finished answers left idle. */
const IDLE_SWEEP_MS = 50;

/** The server's `upgrade` listener: a WebSocket handshake (see `websocket-transport.ts`). */
export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface HttpServer {
  readonly server: Server;
  /**
   * Stops taking connections and lets in-flight requests finish: each answer sent from now on
   * carries `Connection: close`, idle keep-alive sockets are closed at once, and whatever is still
   * open after `graceMs` is destroyed, upgraded sockets included (the gateway's `quiesce` closes
   * its WebSockets first). Resolves once every connection is gone.
   */
  drain(graceMs: number): Promise<void>;
}

/**
 * The node:http server production listens with (and the tests too): the front door's listener
 * behind timeouts for slow headers, slow bodies, idle keep-alive and clients that stop reading, and
 * a cap on open connections, so that no client can hold the process's sockets or memory.
 */
export function createHttpServer(
  listener: RequestListener,
  http: Config['http'],
  { upgrade }: { upgrade?: UpgradeListener | undefined } = {},
): HttpServer {
  let draining = false;
  /**
   * Every answer of this server: one started while the server drains closes its connection after
   * it. A flag read where node writes the headers, rather than a set of in-flight answers kept up to
   * date with a listener on each: this runs for every request.
   */
  class GatewayResponse extends ServerResponse {
    override writeHead(statusCode: number, reasonOrHeaders?: unknown, headers?: unknown): this {
      if (draining) this.shouldKeepAlive = false;
      // node's own writeHead sorts out which optional argument is which.
      return super.writeHead(statusCode, reasonOrHeaders as string, headers as OutgoingHttpHeaders);
    }
  }
  const upgraded = new Set<Duplex>();
  const server = createServer(
    {
      headersTimeout: Math.min(http.headersTimeoutMs, http.requestTimeoutMs),
      requestTimeout: http.requestTimeoutMs,
      keepAliveTimeout: http.keepAliveTimeoutMs,
      // Node checks the two timeouts above only this often (30 s by default).
      connectionsCheckingInterval: Math.min(1_000, http.headersTimeoutMs, http.requestTimeoutMs),
      ServerResponse: GatewayResponse,
    },
    listener,
  );
  if (upgrade) {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (draining) {
        socket.end(
          'HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n',
        );
        return;
      }
      upgraded.add(socket);
      socket.once('close', () => upgraded.delete(socket));
      upgrade(req, socket, head);
    });
  }
  server.maxConnections = http.maxConnections;
  // A socket with nothing read or written for this long is a client that stopped reading (or
  // sending): end it. Event streams stay alive through their keep-alive pings.
  server.timeout = http.socketIdleTimeoutMs;

  return {
    server,
    async drain(graceMs) {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // An answer whose headers went out before the drain (an event stream, a slow body) leaves
      // its keep-alive connection idle when it ends: closed here rather than after the keep-alive
      // timeout.
      const idleSweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
      const timer = setTimeout(() => {
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
      }, graceMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
      clearInterval(idleSweep);
    },
  };
}
