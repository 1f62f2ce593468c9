import {
  createServer,
  type IncomingMessage,
  maxHeaderSize,
  type OutgoingHttpHeaders,
  type RequestListener,
  ServerResponse,
} from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Config } from '../config.js';
import { type RawRefusal, rawRefusal, shuttingDown } from '../errors/refusal.js';
import { writeRawRefusal } from './raw-refusal.js';

/** How often a draining server looks for the connections it may close. */
const IDLE_SWEEP_MS = 50;

/**
 * How long a draining server leaves a keep-alive connection idle before closing it (or the
 * keep-alive timeout it announced, if shorter: past it, a client no longer sends on it). A request
 * its client sent just before the drain, still on its way, arrives meanwhile and is answered.
 */
const DRAIN_IDLE_MS = 1_000;

/** The server's `upgrade` listener: a WebSocket handshake (see `websocket-transport.ts`). */
type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * The node:http server production listens with (and the tests too): the front door's listener
 * behind timeouts for slow headers, slow bodies, idle keep-alive and clients that stop reading, and
 * a cap on open connections, so that no client can hold the process's sockets or memory.
 */
export function createHttpServer(
  listener: RequestListener,
  http: Config['http'],
  { upgrade }: { upgrade?: UpgradeListener | undefined } = {},
) {
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
  const sockets = new Set<Socket>();
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
        writeRawRefusal(socket, shuttingDown);
        return;
      }
      upgraded.add(socket);
      socket.once('close', () => upgraded.delete(socket));
      upgrade(req, socket, head);
    });
  }
  server.on('clientError', answerClientError);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.maxConnections = http.maxConnections;
  // A socket with nothing read or written for this long is a client that stopped reading (or
  // sending): end it. Event streams stay alive through their keep-alive pings.
  server.timeout = http.socketIdleTimeoutMs;

  /**
   * Closes, once they have been idle long enough, the connections a drain may close: not one
   * carrying an answer (node closes it after that answer), nor an upgraded one (its WebSocket
   * closes it). Idle means no answer pending and nothing read since the last look: a request
   * still arriving moves `bytesRead` before node knows of it.
   */
  function startIdleSweep() {
    const idleAfter = Math.min(DRAIN_IDLE_MS, http.keepAliveTimeoutMs);
    const seen = new Map<Socket, { bytesRead: number; since: number }>();
    const sweep = () => {
      const now = performance.now();
      for (const socket of sockets) {
        if (upgraded.has(socket) || socket.writableEnded) continue;
        const answering = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
        const last = seen.get(socket);
        if (answering || last === undefined || last.bytesRead !== socket.bytesRead) {
          seen.set(socket, { bytesRead: socket.bytesRead, since: now });
        } else if (now - last.since >= idleAfter) {
          seen.delete(socket);
          // A FIN, not a reset: the server still reads (node's server is half-open), so that
          // nothing its client sends crossing it is met with a reset; the socket closes once the
          // client answers with its own FIN.
          socket.end();
        }
      }
      for (const socket of seen.keys()) if (!sockets.has(socket)) seen.delete(socket);
    };
    sweep();
    return setInterval(sweep, IDLE_SWEEP_MS);
  }

  return {
    server,
    /**
     * Stops taking connections and lets in-flight requests finish, never resetting one a client
     * has sent: each answer sent from now on carries `Connection: close` (node closes its
     * connection after it); a keep-alive connection left idle for a while is closed gracefully (a
     * FIN, its client's own awaited), so that a request already on its way on it is answered
     * rather than reset; whatever is still open after `graceMs` is destroyed, upgraded sockets
     * included (the gateway's `quiesce` closes its WebSockets first). Resolves once every
     * connection is gone.
     */
    async drain(graceMs: number) {
      draining = true;
      // net's close, not http's: http's also destroys every connection with no request in
      // progress, including those whose next request is already sent but not yet read (the
      // kernel's reset would lose it).
      const closed = new Promise<void>((resolve) =>
        NetServer.prototype.close.call(server, () => resolve()),
      );
      const idleSweep = startIdleSweep();
      const timer = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, graceMs).unref();
      await closed;
      clearTimeout(timer);
      clearInterval(idleSweep);
    },
  };
}

export type HttpServer = ReturnType<typeof createHttpServer>;

/**
 * What node's HTTP parser refuses before any listener sees a request: each with the status node
 * would answer, and a JSON body with a code like every other refusal of the gateway's.
 */
const CLIENT_ERRORS: Record<string, RawRefusal> = {
  HPE_HEADER_OVERFLOW: rawRefusal(
    431,
    'BAD_REQUEST',
    `The request's URL and headers are larger than ${maxHeaderSize} bytes: send the operation in a POST body.`,
  ),
  ERR_HTTP_REQUEST_TIMEOUT: rawRefusal(
    408,
    'REQUEST_TIMEOUT',
    'The request did not arrive in time.',
  ),
};
const MALFORMED = rawRefusal(400, 'BAD_REQUEST', 'The request is not valid HTTP/1.1.');

/** Answers a request node could not parse, as node does but with the gateway's error body. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const answering = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code !== 'ECONNRESET' && socket.writable && !answering?.headersSent) {
    writeRawRefusal(socket, CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED);
    return;
  }
  socket.destroy(error);
}
