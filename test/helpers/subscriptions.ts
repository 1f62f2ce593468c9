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

/**
 * Subscribes over SSE as a browser's fetch or `EventSource` does: `POST` with a JSON body, or
 * `GET` with the operation in the query string, `Accept: text/event-stream` either way.
 */
export async function subscribeSse<Data = Record<string, unknown>>(
  origin: string,
  query: string,
  variables?: Record<string, unknown>,
  {
    method = 'POST',
    headers = {},
  }: { method?: 'GET' | 'POST'; headers?: Record<string, string> } = {},
): Promise<
  Received<ExecutionResult<Data>> & { response: Response; readonly completedByServer: boolean }
> {
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
  const { received, push, complete } = receiver<ExecutionResult<Data>>(async () => {
    controller.abort();
  });
  let completedByServer = false;
  void (async () => {
    if (!response.body) return complete();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const message = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(message)?.[1];
          const data = /^data: ?(.*)$/m.exec(message)?.[1];
          if (event === 'next' && data) push(JSON.parse(data) as ExecutionResult<Data>);
          if (event === 'complete') {
            completedByServer = true;
            complete();
          }
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // Aborted by `close`, or the connection was cut.
    }
    complete();
  })();
  return Object.defineProperties(Object.assign(received, { response }), {
    completedByServer: { get: () => completedByServer },
  }) as Received<ExecutionResult<Data>> & {
    response: Response;
    readonly completedByServer: boolean;
  };
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

/** Subscribes over a graphql-ws client. */
export function subscribeWs<Data = Record<string, unknown>>(
  client: Client,
  query: string,
  variables?: Record<string, unknown>,
): Received<ExecutionResult<Data>> & { readonly error: Promise<unknown> } {
  let dispose = () => {};
  const { received, push, complete } = receiver<ExecutionResult<Data>>(async () => dispose());
  let failed!: (error: unknown) => void;
  const error = new Promise<unknown>((resolve) => {
    failed = resolve;
  });
  dispose = client.subscribe<Data>(
    { query, ...(variables ? { variables } : {}) },
    {
      next: (result) => push(result as ExecutionResult<Data>),
      error: (reason) => {
        failed(reason);
        complete();
      },
      complete,
    },
  );
  return Object.assign(received, { error });
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
