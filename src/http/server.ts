import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';
import type { Config } from '../config.js';

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
  const inFlight = new Set<ServerResponse>();
  // One function for every response, not a closure each: this runs for every request.
  function forget(this: ServerResponse) {
    inFlight.delete(this);
    // A stream that ends while draining (a completed subscription) leaves its keep-alive
    // connection idle: close it now rather than after the keep-alive timeout.
    if (draining) setImmediate(() => server.closeIdleConnections());
  }
  const upgraded = new Set<Duplex>();
  const server = createServer(
    {
      headersTimeout: Math.min(http.headersTimeoutMs, http.requestTimeoutMs),
      requestTimeout: http.requestTimeoutMs,
      keepAliveTimeout: http.keepAliveTimeoutMs,
      // Node checks the two timeouts above only this often (30 s by default).
      connectionsCheckingInterval: Math.min(1_000, http.headersTimeoutMs, http.requestTimeoutMs),
    },
    (req, res) => {
      if (draining) res.setHeader('connection', 'close');
      else {
        inFlight.add(res);
        res.on('close', forget);
      }
      listener(req, res);
    },
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
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => {
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
      }, graceMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
    },
  };
}
