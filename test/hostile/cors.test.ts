import { afterAll, describe, expect, it } from 'vitest';
import type { Harness } from '../helpers/harness.js';
import { sharedHarnesses } from '../helpers/shared-harness.js';

const APP = 'https://app.example.com';
const ADMIN = 'https://admin.example.com';
/** Origins no list names: a sandboxed iframe or a `file:` page (`null`), other sites. */
const UNLISTED = ['null', 'https://evil.example', 'https://app.example.com.evil.example'];

const VERIFY = `mutation ($input: VerifyContractInput!) {
  verifyContract(input: $input) { __typename }
}`;

/** Every request kind a browser makes: a preflight, a query (a miss, then a hit), a mutation. */
async function answersTo(harness: Harness, origin: string) {
  const post = (body: unknown) =>
    harness.fetch('/graphql', {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
  const preflight = await harness.fetch('/graphql', {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    },
  });
  const query = { query: '{ statusPage { name } }' };
  const miss = await post(query);
  const hit = await post(query);
  const mutation = await post({
    query: VERIFY,
    variables: { input: { address: '0x1', chainId: '1' } },
  });
  const uncached = await post({ query: '{ __typename }' });
  const answers = { preflight, miss, hit, mutation, uncached };
  for (const answer of Object.values(answers)) await answer.arrayBuffer();
  return answers;
}

/** What `answersTo` asks, one of each. */
const KINDS = ['preflight', 'miss', 'hit', 'mutation', 'uncached'];

const corsHeaders = (answer: Response) =>
  Object.fromEntries([...answer.headers].filter(([name]) => name.startsWith('access-control-')));

/**
 * CORS_ORIGINS as an operator may write it, with the origins a browser sends for it: one origin
 * (in capitals, with a trailing slash), and two.
 */
const LISTS = [
  { written: 'HTTPS://App.Example.com/', origins: [APP] },
  { written: `${APP},${ADMIN}`, origins: [APP, ADMIN] },
];

describe('CORS with CORS_ORIGINS set', () => {
  const harnesses = sharedHarnesses();
  afterAll(() => harnesses.close());
  const listing = (written: string) => harnesses.use({ env: { CORS_ORIGINS: written } });

  for (const { written, origins } of LISTS) {
    it(`answers only the listed origins (${origins.length} listed): none to null or any other`, async () => {
      const harness = await listing(written);
      for (const origin of UNLISTED) {
        const answers = await answersTo(harness, origin);
        expect(Object.keys(answers)).toEqual(KINDS);
        for (const [kind, answer] of Object.entries(answers)) {
          expect({ origin, kind, cors: corsHeaders(answer) }).toEqual({ origin, kind, cors: {} });
        }
      }
      for (const origin of origins) {
        const answers = await answersTo(harness, origin);
        expect(Object.keys(answers)).toEqual(KINDS);
        for (const [kind, answer] of Object.entries(answers)) {
          expect({
            origin,
            kind,
            allowed: answer.headers.get('access-control-allow-origin'),
          }).toEqual({ origin, kind, allowed: origin });
          expect(answer.headers.get('access-control-allow-credentials')).toBe('true');
          // Whether an answer carries CORS headers depends on the Origin: caches must know.
          expect(answer.headers.get('vary')).toMatch(/\bOrigin\b/);
        }
      }
    });
  }

  it('answers cross-origin requests from memory with the CORS headers Yoga gives a miss', async () => {
    const harness = await listing(`${APP},${ADMIN}`);
    const HIT = 'response_cache_reads_total{result="hit"}';
    const post = (query: string, headers: Record<string, string> = {}) =>
      harness.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
        body: JSON.stringify({ query }),
      });
    const read = async (answer: Response) => ({ answer, body: await answer.text() });
    for (const [i, origin] of [APP, ADMIN, 'https://evil.example'].entries()) {
      // An answer that reads no snapshot is never kept: Yoga's own headers, CORS plugin's included.
      const fromYoga = await read(await post('{ __typename }', { origin }));
      // An origin CORS_ORIGINS does not list gets no CORS header at all (the tests above).
      expect(fromYoga.answer.headers.get('access-control-allow-origin')).toBe(
        origin === 'https://evil.example' ? null : origin,
      );
      // A query of its own for each origin, so that its first request is a miss.
      const query = `{ statusPage { name ${['id', 'url', 'timeZone'][i]} } }`;
      const before = await harness.metric(HIT);
      const miss = await read(await post(query, { origin }));
      const hit = await read(await post(query, { origin }));
      expect(await harness.metric(HIT)).toBe(before + 1);
      expect(hit.body).toBe(miss.body);
      expect(corsHeaders(miss.answer)).toEqual(corsHeaders(fromYoga.answer));
      expect(corsHeaders(hit.answer)).toEqual(corsHeaders(fromYoga.answer));
      expect(hit.answer.headers.get('vary')).toBe('Accept, Accept-Encoding, Origin');
      expect(miss.answer.headers.get('vary')).toBe('Accept, Accept-Encoding, Origin');
      const notModified = await post(query, {
        origin,
        'if-none-match': String(hit.answer.headers.get('etag')),
      });
      expect(notModified.status).toBe(304);
      expect(corsHeaders(notModified)).toEqual(corsHeaders(fromYoga.answer));
    }
    const allowed = await post('{ statusPage { name } }', { origin: ADMIN });
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ADMIN);
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    expect(allowed.headers.get('access-control-expose-headers')).toBe('x-request-id');
    const refused = await post('{ statusPage { name } }', { origin: 'https://evil.example' });
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    // The same answer to a same-origin request: from memory, without CORS headers, and saying
    // that it varies by Origin, so that no shared cache hands it to a cross-origin caller.
    const before = await harness.metric(HIT);
    const sameOrigin = await post('{ statusPage { name } }');
    expect(await harness.metric(HIT)).toBe(before + 1);
    expect(corsHeaders(sameOrigin)).toEqual({});
    expect(sameOrigin.headers.get('vary')).toBe('Accept, Accept-Encoding, Origin');
  });

  it('matches an origin listed with a trailing slash or in capitals as browsers send it', async () => {
    const harness = await listing('HTTPS://App.Example.com/');
    const { miss, mutation } = await answersTo(harness, APP);
    expect(miss.headers.get('access-control-allow-origin')).toBe(APP);
    expect(mutation.headers.get('access-control-allow-origin')).toBe(APP);
  });
});
