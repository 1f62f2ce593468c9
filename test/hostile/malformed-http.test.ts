import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InProcessGateway, startInProcess } from '../helpers/in-process.js';

/*
 * What node's HTTP parser refuses never reaches a listener: node answered it with a bare status
 * line. The gateway answers it with the same JSON error body and code as every other refusal.
 * The listener alone: in process.
 */

let gateway: InProcessGateway;
beforeAll(() => {
  gateway = startInProcess();
});
afterAll(async () => {
  await gateway?.close();
});

/** Sends `bytes` on a raw connection and parses what the server answered before it ended it. */
async function exchange(bytes: string): Promise<{ status: number; body: unknown }> {
  const received = await gateway.exchange(bytes);
  const [head = '', body = ''] = received.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), body: JSON.parse(body) };
}

describe('requests node cannot parse', () => {
  it('answers a URL past the header limit with 431 and a code', async () => {
    const answer = await exchange(
      `GET /graphql?query=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
    );
    expect(answer).toEqual({
      status: 431,
      body: {
        errors: [
          {
            message: expect.stringContaining('POST body'),
            extensions: { code: 'BAD_REQUEST' },
          },
        ],
      },
    });
  });

  it('answers bytes that are not HTTP with 400 and a code', async () => {
    const answer = await exchange('\u0000\u0001 not http at all\r\n\r\n');
    expect(answer).toEqual({
      status: 400,
      body: { errors: [{ message: expect.any(String), extensions: { code: 'BAD_REQUEST' } }] },
    });
    // And keeps serving.
    expect((await gateway.request('/health')).status).toBe(200);
  });
});
