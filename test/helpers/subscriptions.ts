import type { ExecutionResult } from 'graphql';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { Simulator } from '../../simulator/src/server.js';
import { eventually } from './eventually.js';

/** What a subscriber received, to await one event at a time. */
export interface Received<Event = ExecutionResult> {
  /** Every event so far, in order. */
  readonly events: Event[];
  /** The next event not yet taken by `next`; rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<Event>;
  /** Resolves when the server completed the stream. */
  readonly completed: Promise<void>;
  close(): Promise<void>;
}

/** A queue fed by a transport: `push` as events arrive, `complete` when the server ends it. */
function receiver<Event>(close: () => Promise<void>) {
  const events: Event[] = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  let complete!: () => void;
  const completed = new Promise<void>((resolve) => {
    complete = resolve;
  });
  const received: Received<Event> = {
    events,
    completed,
    close,
    async next(timeoutMs = 5_000) {
      const deadline = performance.now() + timeoutMs;
      while (taken >= events.length) {
        const left = deadline - performance.now();
        if (left <= 0) throw new Error(`no event within ${timeoutMs} ms (got ${events.length})`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, left);
        });
      }
      return events[taken++] as Event;
    },
  };
  return {
    received,
    push(event: Event) {
      events.push(event);
      wake?.();
    },
    complete: () => {
      complete();
      wake?.();
    },
  };
}

/** One SSE frame as sent: its `event` and `data` fields, or a comment line (the keep-alive). */
export interface SseFrame {
  readonly event?: string;
  /** The `data` field's text as sent, unparsed. */
  readonly data?: string;
  /** The text after `:` on a comment line: `''` for the gateway's keep-alive. */
  readonly comment?: string;
}

/**
 * Splits SSE text into its frames, those ended by a blank line; `rest` is the text of one not
 * yet ended (the start of the next chunk).
 */
export function parseSse(text: string): SseFrame[] & { rest: string } {
  const frames: SseFrame[] = [];
  let start = 0;
  for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n', start)) {
    const frame: { event?: string; data?: string; comment?: string } = {};
    for (const line of text.slice(start, end).split('\n')) {
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === '') frame.comment = value;
      else if (field === 'event') frame.event = value;
      else if (field === 'data')
        frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
    }
    frames.push(frame);
    start = end + 2;
  }
  return Object.assign(frames, { rest: text.slice(start) });
}

/** The results of SSE text's `next` events, parsed. */
export const sseResults = <Data = Record<string, unknown>>(text: string) =>
  parseSse(text).flatMap(({ event, data }) =>
    event === 'next' && data !== undefined ? [JSON.parse(data) as ExecutionResult<Data>] : [],
  );

/** An SSE subscription as `subscribeSse` holds it. */
export type SseSubscription<Data> = Received<ExecutionResult<Data>> & {
  response: Response;
  /** Every frame so far as sent, keep-alive comments among them. */
  readonly frames: SseFrame[];
  /** Each `next` event's data as sent, unparsed: to compare the bytes subscribers are sent. */
  readonly payloads: string[];
  readonly completedByServer: boolean;
};

/**
 * Subscribes over SSE as a browser's fetch or `EventSource` does: `POST` with a JSON body, or
 * `GET` with the operation in the query string, `Accept: text/event-stream` either way. `close`
 * aborts the request, which closes its connection.
 */
export async function subscribeSse<Data = Record<string, unknown>>(
  origin: string,
  query: string,
  variables?: Record<string, unknown>,
  {
    method = 'POST',
    headers = {},
  }: { method?: 'GET' | 'POST'; headers?: Record<string, string> } = {},
): Promise<SseSubscription<Data>> {
  const controller = new AbortController();
  const search = new URLSearchParams({
    query,
    ...(variables ? { variables: JSON.stringify(variables) } : {}),
  });
  const response = await fetch(
    method === 'GET' ? `${origin}/graphql?${search}` : `${origin}/graphql`,
    {
      method,
      headers: {
        accept: 'text/event-stream',
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(method === 'POST' ? { body: JSON.stringify({ query, variables }) } : {}),
      signal: controller.signal,
    },
  );
  return readSse<Data>(response, () => controller.abort());
}

/**
 * Reads an SSE answer however it was asked for (a persisted document's GET, say) as a subscriber
 * does; `close` stops reading and calls `abort`, which should close the request's connection.
 */
export function readSse<Data = Record<string, unknown>>(
  response: Response,
  abort: () => void = () => {},
): SseSubscription<Data> {
  const reader = response.body?.getReader();
  const { received, push, complete } = receiver<ExecutionResult<Data>>(async () => {
    abort();
    await reader?.cancel().catch(() => {});
  });
  const frames: SseFrame[] = [];
  const payloads: string[] = [];
  let completedByServer = false;
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader?.read()) {
        const parsed = parseSse(buffer + decoder.decode(chunk.value, { stream: true }));
        buffer = parsed.rest;
        for (const frame of parsed) {
          frames.push(frame);
          if (frame.event === 'next' && frame.data !== undefined) {
            payloads.push(frame.data);
            push(JSON.parse(frame.data) as ExecutionResult<Data>);
          }
          if (frame.event === 'complete') {
            completedByServer = true;
            complete();
          }
        }
      }
    } catch {
      // Aborted by `close`, or the connection was cut.
    }
    complete();
  })();
  return Object.defineProperties(Object.assign(received, { response, frames, payloads }), {
    completedByServer: { get: () => completedByServer },
  }) as SseSubscription<Data>;
}

/** A graphql-ws client of the gateway (`graphql-transport-ws`), with `headers` on the handshake. */
export function wsClient(
  origin: string,
  {
    headers = {},
    keepAlive = 0,
    lazy = true,
  }: { headers?: Record<string, string>; keepAlive?: number; lazy?: boolean } = {},
): Client {
  return createClient({
    url: `${origin.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: class extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers });
      }
    },
    retryAttempts: 0,
    lazy,
    // A socket the server closes is what the shutdown tests wait for, not an error to print.
    onNonLazyError: () => {},
    keepAlive,
  });
}

/** The answer to a WebSocket handshake: 101 and the open socket, or the refusal's status and body. */
export type Handshake =
  | { readonly status: 101; readonly socket: WebSocket }
  | { readonly status: number; readonly socket?: undefined; readonly body: string };

/**
 * Opens a socket on the gateway's `/graphql` offering `graphql-transport-ws`, for the tests that
 * write the protocol's messages by hand (what graphql-ws would never send, or the text as sent).
 * Resolves with the open socket, or with the handshake's refusal; rejects if it could not connect.
 */
export function openSocket(
  origin: string,
  {
    headers = {},
    protocol = 'graphql-transport-ws',
    path = '/graphql',
    autoPong = true,
  }: {
    headers?: Record<string, string>;
    /** The subprotocol offered, none if `null`. */
    protocol?: string | null;
    path?: string;
    /** Whether the socket answers the server's pings. */
    autoPong?: boolean;
  } = {},
): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(
      `${origin.replace(/^http/, 'ws')}${path}`,
      protocol === null ? [] : [protocol],
      { headers, autoPong },
    );
    let settled = false;
    socket.on('open', () => {
      settled = true;
      resolve({ status: 101, socket });
    });
    socket.on('unexpected-response', (_request, response) => {
      settled = true;
      let body = '';
      response.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    socket.on('error', (error) => {
      if (!settled) reject(error);
    });
  });
}

/** Opens a socket as `openSocket` does, and fails unless the handshake was accepted. */
export async function openedSocket(
  origin: string,
  options?: Parameters<typeof openSocket>[1],
): Promise<WebSocket> {
  const opened = await openSocket(origin, options);
  if (!opened.socket) throw new Error(`handshake refused with ${opened.status}: ${opened.body}`);
  return opened.socket;
}

/** Resolves with the code and reason a socket is closed with. */
export const closeOf = (socket: WebSocket) =>
  new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );

/**
 * Sends `connection_init` (or `init`, as written) and resolves with the `connection_ack`, or with
 * the close that came instead.
 */
export function initialise(
  socket: WebSocket,
  init = JSON.stringify({ type: 'connection_init' }),
): Promise<{ acked: true } | { acked: false; code: number; reason: string }> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      if ((JSON.parse(String(data)) as { type?: string }).type !== 'connection_ack') return;
      socket.off('message', onMessage);
      resolve({ acked: true });
    };
    socket.on('message', onMessage);
    void closeOf(socket).then((closed) => resolve({ acked: false, ...closed }));
    socket.send(init);
  });
}

/**
 * Subscribes over a graphql-ws client. `completed` resolves once the operation ended, by its
 * `complete` or its `error`: by then `failure` holds the error's reason if it was one.
 */
export function subscribeWs<Data = Record<string, unknown>>(
  client: Client,
  query: string,
  variables?: Record<string, unknown>,
): Received<ExecutionResult<Data>> & {
  readonly error: Promise<unknown>;
  readonly failure: unknown;
} {
  let dispose = () => {};
  const { received, push, complete } = receiver<ExecutionResult<Data>>(async () => dispose());
  let failed!: (error: unknown) => void;
  let failure: unknown;
  const error = new Promise<unknown>((resolve) => {
    failed = resolve;
  });
  dispose = client.subscribe<Data>(
    { query, ...(variables ? { variables } : {}) },
    {
      next: (result) => push(result as ExecutionResult<Data>),
      error: (reason) => {
        failure = reason;
        failed(reason);
        complete();
      },
      complete,
    },
  );
  return Object.defineProperty(Object.assign(received, { error }), 'failure', {
    get: () => failure,
  }) as Received<ExecutionResult<Data>> & {
    readonly error: Promise<unknown>;
    readonly failure: unknown;
  };
}

/** The default page's documents, where the simulator serves them. */
export const STATUS_DOCUMENTS = {
  summary: '/status/api/v2/summary.json',
  upcoming: '/status/api/v2/scheduled-maintenances/upcoming.json',
  incidentHistory: '/status/api/v2/incidents.json',
  maintenanceHistory: '/status/api/v2/scheduled-maintenances.json',
} as const;

/**
 * Resolves once the gateway's poller has read `paths` (the default page's summary unless told) as
 * the feed stands now, so that the next edit of the feed is a change, and any change the poller
 * was still to find has been found: two more requests of each, since the first may have been
 * under way already.
 */
export async function polledOnce(
  simulator: Pick<Simulator, 'requestCount'>,
  paths: readonly string[] = [STATUS_DOCUMENTS.summary],
): Promise<void> {
  const before = paths.map((path) => simulator.requestCount(path));
  await eventually(() =>
    paths.every((path, i) => simulator.requestCount(path) >= (before[i] ?? 0) + 2),
  );
}
