import type { ServerResponse } from 'node:http';

/** A Fetch API response's headers as node:http takes them, `set-cookie` kept as a list. */
export function nodeHeadersOf(response: Response): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  return headers;
}

/**
 * Writes a response whose body is read as it arrives (an event stream, a multipart answer, anything
 * that is not one complete JSON document): each chunk goes out as soon as it is produced, and a
 * client that goes away cancels the stream.
 */
export async function streamResponse(res: ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, nodeHeadersOf(response));
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
const drainedOrClosed = (res: ServerResponse) =>
  new Promise<void>((resolve) => {
    res.once('drain', resolve);
    res.once('close', resolve);
  });
