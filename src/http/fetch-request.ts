import type { IncomingMessage } from 'node:http';

export interface FetchRequestOptions {
  /** The body, already read. */
  readonly body?: Buffer | undefined;
  readonly signal?: AbortSignal;
  /** Headers left out (a WebSocket handshake's are not an operation's). */
  readonly without?: RegExp;
  /** Replaces the request's `x-request-id`: the one the gateway settled on. */
  readonly requestId?: string;
  /** Replaces its path and query (a WebSocket operation's, as a GET of its parameters). */
  readonly url?: string;
}

/**
 * A node request as the Fetch API `Request` Yoga handles. The origin is fixed: the client's Host
 * header is not trusted to make a valid URL.
 */
export function fetchRequestOf(req: IncomingMessage, options: FetchRequestOptions = {}): Request {
  const { body, signal, without, requestId, url = req.url ?? '/' } = options;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || without?.test(name)) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  if (requestId !== undefined) headers.set('x-request-id', requestId);
  return new Request(`http://gateway${url}`, {
    method: req.method ?? 'GET',
    headers,
    // Socket bytes sit in plain ArrayBuffers, never shared ones.
    ...(body ? { body: body as Uint8Array<ArrayBuffer> } : {}),
    ...(signal ? { signal } : {}),
  });
}
