import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

/** A body sent in chunks, with no Content-Length to refuse it by. */
function chunked(text: string, chunkBytes = 64 * 1024): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + chunkBytes));
      offset += chunkBytes;
    },
  });
}

describe('one body limit for every content type', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ env: { MAX_BODY_BYTES: 10_000 } });
  });
  afterAll(() => harness.close());

  const post = (contentType: string, body: ReadableStream<Uint8Array> | string) =>
    harness.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': contentType, accept: 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);

  it('refuses a 5 MB chunked application/graphql body with 413', async () => {
    const response = await post(
      'application/graphql',
      chunked(`{ __typename } #${'x'.repeat(5_000_000)}`),
    );
    expect(response.status).toBe(413);
    expect(
      ((await response.json()) as { errors: { extensions: unknown }[] }).errors[0]?.extensions,
    ).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
    });
  });

  it('refuses a chunked JSON body over the limit with 413, and still reads small ones', async () => {
    const big = await post(
      'application/json',
      chunked(JSON.stringify({ query: `{ __typename } #${'x'.repeat(50_000)}` })),
    );
    expect(big.status).toBe(413);
    const small = await post('application/graphql', '{ statusPage { name } }');
    expect(small.status).toBe(200);
    expect(
      ((await small.json()) as { data: { statusPage: { name: string } } }).data.statusPage.name,
    ).toBeTruthy();
  });
});
