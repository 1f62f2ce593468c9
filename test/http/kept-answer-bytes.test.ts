import { describe, expect, it } from 'vitest';
import { encodeAnswer } from '../../src/http/response-cache/encoded-answer.js';

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
});
