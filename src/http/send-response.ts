import type { IncomingMessage, ServerResponse } from 'node:http';
import { negotiateEncoding } from './content-encoding.js';
import {
  compress,
  type EncodedAnswer,
  LARGEST_UNCODED,
  valueIndexOf,
} from './response-cache/encoded-answer.js';

/** Where a kept answer's header list holds the two values each answer fills in. */
const CACHE_CONTROL = valueIndexOf('cache-control');
const REQUEST_ID = valueIndexOf('x-request-id');

/** A Fetch API response's headers as node:http takes them, `set-cookie` kept as a list. */
export function nodeHeadersOf(response: Response): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  // Lower-cased: a @whatwg-node response's own headers keep the case they were made with.
  response.headers.forEach((value, name) => {
    const lower = name.toLowerCase();
    if (lower !== 'set-cookie') headers[lower] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  return headers;
}

/**
 * Sends a kept answer (a response-cache entry, the GraphiQL page) in the coding the request
 * negotiates, with its ETag, `cacheControl` and, to a cross-origin request, `cors` headers; a
 * request whose `If-None-Match` names that ETag gets 304 and no body. Returns the status sent.
 * This is the hit path: the headers made with the answer, one write.
 */
export function sendEncodedAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  answer: EncodedAnswer,
  cacheControl: string,
  requestId: string,
  cors?: readonly string[],
): 200 | 304 {
  const { body, text, etag, vary, headers } = answer.representation(
    negotiateEncoding(req.headers['accept-encoding']),
  );
  if (matchesEtag(req.headers['if-none-match'], etag)) {
    const notModified = [
      'etag',
      etag,
      'cache-control',
      cacheControl,
      'vary',
      vary,
      'x-request-id',
      requestId,
    ];
    res.writeHead(304, cors === undefined ? notModified : [...notModified, ...cors]).end();
    return 304;
  }
  headers[CACHE_CONTROL] = cacheControl;
  headers[REQUEST_ID] = requestId;
  // The shared list stays as it is made: a cross-origin answer gets a longer copy.
  res.writeHead(200, cors === undefined ? headers : [...headers, ...cors]);
  if (text === undefined) res.end(body);
  else res.end(text, 'latin1');
  return 200;
}

/**
 * Whether an `If-None-Match` header names `etag` (or is `*`): then the client has the answer, and
 * gets 304. Weak comparison, as RFC 9110 §13.1.2 asks: `W/"x"` matches `"x"`.
 */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  for (const tag of header.split(',')) {
    const trimmed = tag.trim();
    if ((trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed) === etag) return true;
  }
  return false;
}

/**
 * Sends an answer that is not kept (anything the response cache may not serve again) with
 * `headers`, coded for this request alone when it is above 1 KiB and the client accepts a coding
 * (then with `vary`). Resolves with whether it was written: false when the client is gone.
 */
export async function sendOnce(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: Record<string, string | string[]>,
  bytes: Buffer,
  vary: string,
): Promise<boolean> {
  if (res.destroyed) return false;
  let body = bytes;
  if (bytes.byteLength > LARGEST_UNCODED) {
    headers.vary = vary;
    const encoding = negotiateEncoding(req.headers['accept-encoding']);
    if (encoding !== 'identity') {
      const coded = await compress(bytes, encoding);
      if (coded.byteLength < bytes.byteLength) {
        body = coded;
        headers['content-encoding'] = encoding;
      }
    }
  }
  // The client may have gone while the answer was compressed.
  if (res.destroyed) return false;
  headers['content-length'] = String(body.byteLength);
  res.writeHead(status, headers).end(body);
  return true;
}

/**
 * Writes the body of a response whose head is written and that is read as it arrives (an event
 * stream, a multipart answer, anything that is not one complete JSON document): each chunk goes
 * out as soon as it is produced, and a client that goes away cancels the stream.
 */
export async function streamResponse(res: ServerResponse, response: Response): Promise<void> {
  res.flushHeaders();
  if (!response.body) {
    res.end();
    return;
  }
  // Read by hand: Yoga's bodies are @whatwg-node streams, which node's `Readable.fromWeb` refuses.
  const reader = response.body.getReader();
  const gone = () => void reader.cancel().catch(() => {});
  res.once('close', gone);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await drainedOrClosed(res);
      if (res.destroyed) break;
    }
    res.end();
  } catch {
    // The client went away or the stream failed mid-way; either way the socket is done.
    res.destroy();
  } finally {
    res.off('close', gone);
  }
}

/** Waits until the socket takes more, or is gone. */
export const drainedOrClosed = (res: ServerResponse) =>
  new Promise<void>((resolve) => {
    res.once('drain', resolve);
    res.once('close', resolve);
  });
