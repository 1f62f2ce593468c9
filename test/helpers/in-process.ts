import { once } from 'node:events';
import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { type Duplex, duplexPair } from 'node:stream';
import type { LevelWithSilent } from 'pino';
import WebSocket, { type ClientOptions } from 'ws';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createHttpServer } from '../../src/http/server.js';
import { type GatewayEnv, gatewayConfig, keptLogger } from './harness.js';

/**
 * Where the upstreams of a gateway in process are said to be: nothing listens there, and a test of
 * the listener alone asks nothing of them (one that did would see them refuse at once).
 */
const NO_UPSTREAM = 'http://127.0.0.1:1';

/** An answer as the client read it. */
export interface InProcessAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export interface InProcessGateway {
  readonly gateway: Gateway;
  /** The production node:http server, listening nowhere: each connection is given to it. */
  readonly server: Server;
  /** Every line the gateway logged, parsed. */
  readonly logs: Record<string, unknown>[];
  /** Sends one request to the listener over a connection of its own; `path` as on the wire. */
  request(
    path: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string },
  ): Promise<InProcessAnswer>;
  /** POSTs an operation to `/graphql` and parses the answer. */
  execute(
    query: string,
  ): Promise<Omit<InProcessAnswer, 'text'> & { body: { data?: unknown; errors?: GraphQLError[] } }>;
  /** A connection to the listener (the client's end), for what no HTTP client sends. */
  connect(): Duplex;
  /** Writes `bytes` on a connection of its own and resolves with all it received once the server ends it. */
  exchange(bytes: string): Promise<string>;
  /**
   * A `ws` WebSocket to the listener at `path` (as on the wire), over a connection of its own,
   * not yet open: its `open`, or `unexpected-response` when the handshake is refused.
   * @default path '/graphql', protocols ['graphql-transport-ws']
   */
  websocket(path?: string, protocols?: string[], options?: ClientOptions): WebSocket;
  /** A WebSocket as `websocket` makes it, once open; rejects if the handshake is refused. */
  openedWebSocket(path?: string, protocols?: string[], options?: ClientOptions): Promise<WebSocket>;
  /** How many connections to the listener are open now, as a listening server's `getConnections`. */
  openConnections(): number;
  close(): Promise<void>;
}

interface GraphQLError {
  readonly message: string;
  readonly extensions?: Record<string, unknown>;
}

/**
 * A gateway configured from environment variables as `main.ts` configures it, its listener served
 * by the production node:http server in this process, with no port and no simulator: each request
 * a connection of its own made in memory (`duplexPair`), so that node's HTTP parser, the server's
 * limits and the front door all see it as they see a client's. For the tests of the listener alone
 * (routing, headers, CORS, what the schema refuses before it runs): they need a configuration of
 * their own, not the upstreams a harness starts a simulator for.
 */
export function startInProcess(
  options: {
    env?: GatewayEnv;
    /** @default 'debug' */
    logLevel?: LevelWithSilent;
  } = {},
): InProcessGateway {
  const { env = {}, logLevel = 'debug' } = options;
  const { logger, logs } = keptLogger(logLevel);
  const config = gatewayConfig(env, {
    STATUS_BASE_URL: `${NO_UPSTREAM}/status/api/v2`,
    VERIFY_BASE_URL: `${NO_UPSTREAM}/verify`,
    UPSTREAM_RETRIES: '0',
  });
  const gateway = createGateway(config, { logger });
  const { server } = createHttpServer(gateway.listener, config.http, { upgrade: gateway.upgrade });

  // The server tracks the connections of a port it listens on; these it never accepted, so keep them.
  const connections = new Set<Duplex>();
  const connect = (): Duplex => {
    const [client, served] = duplexPair();
    connections.add(served);
    // As over TCP, an end destroyed is a connection gone for the other end too (a pair only ends).
    client.once('close', () => served.destroy());
    // And a client's socket is not half-open: once the server ended it, it is closed (as `net`'s
    // are, `allowHalfOpen` off; ending a pair's side waits for the other to be read, which a
    // server done with the connection no longer does).
    client.once('end', () => client.destroy());
    served.once('close', () => {
      connections.delete(served);
      client.destroy();
    });
    server.emit('connection', served);
    return client;
  };
  const request: InProcessGateway['request'] = (path, init = {}) =>
    new Promise((resolve, reject) => {
      const { method = 'GET', headers = {}, body } = init;
      const outgoing = httpRequest(
        {
          method,
          path,
          headers: {
            host: 'gateway',
            ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
            ...headers,
          },
          createConnection: connect,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: headersOf(response.headers),
              text: Buffer.concat(chunks).toString(),
            }),
          );
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const websocket: InProcessGateway['websocket'] = (
    path = '/graphql',
    protocols = ['graphql-transport-ws'],
    options = {},
  ) => new WebSocket(`ws://gateway${path}`, protocols, { ...options, createConnection: connect });

  return {
    gateway,
    server,
    logs,
    request,
    websocket,
    openedWebSocket: (...args) =>
      new Promise((resolve, reject) => {
        const socket = websocket(...args);
        socket.once('open', () => resolve(socket));
        socket.once('unexpected-response', (_request, response) => {
          reject(new Error(`handshake refused with ${response.statusCode}`));
          socket.terminate();
        });
        socket.once('error', reject);
      }),
    openConnections: () => connections.size,
    async execute(query) {
      const { text, ...answer } = await request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query }),
      });
      return { ...answer, body: JSON.parse(text) };
    },
    connect,
    async exchange(bytes) {
      const connection = connect();
      let received = '';
      connection.on('data', (chunk) => {
        received += String(chunk);
      });
      const ended = once(connection, 'end');
      connection.write(bytes);
      await ended;
      connection.destroy();
      return received;
    },
    async close() {
      for (const connection of connections) connection.destroy();
      await gateway.close();
    },
  };
}

function headersOf(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      headers.append(name, one);
    }
  }
  return headers;
}
