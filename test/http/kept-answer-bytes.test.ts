import { describe, expect, it } from 'vitest';
import {
  encodeAnswer,
  type KeptHeader,
  valueIndexOf,
} from '../../src/http/response-cache/encoded-answer.js';

/*
 * Finding (issue 36): zlib hands its output as a view of its 64 KiB output chunk, so a kept answer's
 * brotli and gzip forms (a few hundred bytes for a 9 KB answer) held 64 KiB each, beyond what the
 * response cache counts. A kept answer's codings hold memory of their own size.
 */
describe('a kept answer', () => {
  it('holds each coding in memory of its own size', async () => {
    const body = Buffer.from(
      JSON.stringify({
        data: {
          components: Array.from({ length: 60 }, (_, i) => ({
            id: `component-${i}`,
            status: 'OPERATIONAL',
          })),
        },
      }),
    );
    const answer = await encodeAnswer(body, 'application/json', 'Accept, Accept-Encoding');
    const codings = (['br', 'gzip'] as const).map((coding) => answer.representation(coding).body);
    expect(codings.map((coded) => coded.byteLength < body.byteLength)).toEqual([true, true]);
    expect(codings.map((coded) => coded.buffer.byteLength)).toEqual(
      codings.map((coded) => coded.byteLength),
    );
  });

  it('holds each header where its name says, in every coding', async () => {
    const body = Buffer.from(JSON.stringify({ data: { text: 'x'.repeat(4096) } }));
    const answer = await encodeAnswer(body, 'application/json', 'Accept, Accept-Encoding');
    const named: KeptHeader[] = ['content-type', 'etag', 'cache-control', 'vary', 'x-request-id'];
    for (const coding of ['identity', 'br', 'gzip'] as const) {
      const { headers, etag } = answer.representation(coding);
      expect(named.map((name) => headers[valueIndexOf(name) - 1])).toEqual(named);
      expect(headers[valueIndexOf('etag')]).toBe(etag);
      expect(headers[valueIndexOf('vary')]).toBe('Accept, Accept-Encoding');
    }
    expect(answer.representation('br').headers.slice(-2)).toEqual(['content-encoding', 'br']);
  });
});
