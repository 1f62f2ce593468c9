import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InProcessGateway, startInProcess } from '../helpers/in-process.js';

/**
 * POSTs `text` to `/graphql` in chunks of `chunkBytes`, with no Content-Length to refuse it by;
 * resolves with the answer's status and parsed body.
 */
function postChunked(
  gateway: InProcessGateway,
  contentType: string,
  text: string,
  chunkBytes = 64 * 1024,
): Promise<{ status: number; body: { errors?: { extensions?: unknown }[] } }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = request(
      {
        method: 'POST',
        path: '/graphql',
        headers: { host: 'gateway', 'content-type': contentType, accept: 'application/json' },
        createConnection: gateway.connect,
      },
      (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString()),
          }),
        );
      },
    );
    // The server may stop reading once it refused: what is still being sent then is lost.
    outgoing.on('error', (error) => {
      if (!answered) reject(error);
    });
    const bytes = Buffer.from(text);
    const writeFrom = (offset: number) => {
      if (answered || offset >= bytes.length) {
        outgoing.end();
        return;
      }
      outgoing.write(bytes.subarray(offset, offset + chunkBytes), () =>
        writeFrom(offset + chunkBytes),
      );
    };
    writeFrom(0);
  });
}

/** The listener alone (its body limit), in process. */
describe('one body limit for every content type', () => {
  let gateway: InProcessGateway;
  beforeAll(() => {
    gateway = startInProcess({ env: { MAX_BODY_BYTES: 10_000 } });
  });
  afterAll(() => gateway.close());

  it('refuses a 5 MB chunked application/graphql body with 413', async () => {
    const response = await postChunked(
      gateway,
      'application/graphql',
      `{ __typename } #${'x'.repeat(5_000_000)}`,
    );
    expect(response.status).toBe(413);
    expect(response.body.errors?.[0]?.extensions).toEqual({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('refuses a chunked JSON body over the limit with 413, and still reads small ones', async () => {
    const big = await postChunked(
      gateway,
      'application/json',
      JSON.stringify({ query: `{ __typename } #${'x'.repeat(50_000)}` }),
    );
    expect(big.status).toBe(413);
    const small = await gateway.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/graphql', accept: 'application/json' },
      body: '{ __typename }',
    });
    expect(small.status).toBe(200);
    expect(JSON.parse(small.text)).toEqual({ data: { __typename: 'Query' } });
  });
});
