/** The upstream's body exceeded the size the gateway accepts. */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';

  constructor(maxBytes: number) {
    super(`the body is larger than ${maxBytes} bytes`);
  }
}

/** The upstream sent its headers but not the whole body in time. */
export class BodyTimeoutError extends Error {
  override readonly name = 'BodyTimeoutError';

  constructor(timeoutMs: number) {
    super(`the body did not arrive within ${timeoutMs} ms`);
  }
}

/**
 * Reads a request's or response's body as UTF-8 text, giving up past `maxBytes` or `timeoutMs`:
 * `fetch` alone buffers a body of any size, for as long as the other side takes to trickle it.
 */
export async function readBodyText(
  response: Pick<Response, 'headers' | 'body'>,
  { maxBytes, timeoutMs }: { maxBytes: number; timeoutMs: number },
): Promise<string> {
  if (Number(response.headers.get('content-length')) > maxBytes) {
    await response.body?.cancel();
    throw new BodyTooLargeError(maxBytes);
  }
  if (!response.body) return '';

  const reader = response.body.getReader();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    reader.cancel().catch(() => {});
  }, timeoutMs);
  // The bytes are kept and decoded once, into one flat string: decoded chunk by chunk, a body is a
  // rope of pieces that the first look at it copies whole, with the pieces still held.
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (timedOut) throw new BodyTimeoutError(timeoutMs);
      if (done) return new TextDecoder().decode(Buffer.concat(chunks, size));
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        throw new BodyTooLargeError(maxBytes);
      }
      chunks.push(value);
    }
  } finally {
    clearTimeout(timer);
  }
}
