// A GraphQL subscription over server-sent events, read with fetch rather than EventSource: fetch
// shows why a request was refused (its status and body, which EventSource hides), and the board
// decides when to try again (EventSource retries by itself, for ever).

/**
 * Opens the subscription at `url` and hands `onResult` each result, from `next` events or from a
 * refusal answered as a plain GraphQL response. Resolves once the stream is over: the server
 * completed it, refused it, or closed the connection. Rejects when the request fails, or `signal`
 * aborts it.
 */
export async function readSubscription(url, { signal, onOpen, onResult }) {
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream' },
    cache: 'no-store',
    signal,
  });
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    onResult(await refusalOf(response));
    return;
  }
  onOpen();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let event = 'message';
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end = buffer.indexOf('\n');
    while (end >= 0) {
      const line = buffer.slice(0, end).replace(/\r$/, '');
      buffer = buffer.slice(end + 1);
      end = buffer.indexOf('\n');
      if (line === '') {
        if (event === 'complete') {
          await reader.cancel();
          return;
        }
        if (event === 'next' && data.length > 0) onResult(JSON.parse(data.join('\n')));
        event = 'message';
        data = [];
        continue;
      }
      // A line starting with a colon is a comment: the server's keep-alive.
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const fieldValue = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = fieldValue;
      else if (field === 'data') data.push(fieldValue);
    }
  }
}

/** What a response that is not an event stream says: its GraphQL errors, or its HTTP status. */
async function refusalOf(response) {
  try {
    const result = await response.json();
    if (Array.isArray(result?.errors)) return result;
  } catch {
    // Not JSON: its status says enough.
  }
  return { errors: [{ message: `The gateway answered HTTP ${response.status}.` }] };
}
