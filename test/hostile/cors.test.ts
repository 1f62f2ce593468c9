import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { type InProcessGateway, startInProcess } from '../helpers/in-process.js';

const APP = 'https://app.example.com';
const ADMIN = 'https://admin.example.com';
/** Origins no list names: a sandboxed iframe or a `file:` page (`null`), other sites. */
const UNLISTED = ['null', 'https://evil.example', 'https://app.example.com.evil.example'];

const VERIFY = `mutation ($input: VerifyContractInput!) {
  verifyContract(input: $input) { __typename }
}`;

/** An answer's status and headers, from a gateway on a port or its listener in process. */
type Send = (
  path: string,
  init: { method?: string; headers: Record<string, string>; body?: string },
) => Promise<{ readonly headers: Headers }>;

/**
 * Every request kind a browser makes: a preflight, a query (a miss, then a hit: with `cached`
 * only, as an answer is cached only when the status feed answered it), a mutation, and an answer
 * never cached.
 */
async function answersTo(send: Send, origin: string, { cached }: { cached: boolean }) {
  const post = (body: unknown) =>
    send('/graphql', {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
  const preflight = await send('/graphql', {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    },
  });
  const query = { query: '{ statusPage { name } }' };
  const hits = cached ? { miss: await post(query), hit: await post(query) } : {};
  const mutation = await post({
    query: VERIFY,
    variables: { input: { address: '0x1', chainId: '1' } },
  });
  const uncached = await post({ query: '{ __typename }' });
  return { preflight, ...hits, mutation, uncached };
}

/** What `answersTo` asks, one of each. */
const KINDS = ['preflight', 'miss', 'hit', 'mutation', 'uncached'];
const UNCACHED_KINDS = KINDS.filter((kind) => kind !== 'miss' && kind !== 'hit');

const corsHeaders = (answer: { readonly headers: Headers }) =>
  Object.fromEntries([...answer.headers].filter(([name]) => name.startsWith('access-control-')));

/** Asks every kind of `origins` and of the unlisted origins, and checks who got CORS headers. */
async function expectOnlyListed(
  send: Send,
  origins: readonly string[],
  { cached }: { cached: boolean },
) {
  for (const origin of UNLISTED) {
    const answers = await answersTo(send, origin, { cached });
    expect(Object.keys(answers)).toEqual(cached ? KINDS : UNCACHED_KINDS);
    for (const [kind, answer] of Object.entries(answers)) {
      expect({ origin, kind, cors: corsHeaders(answer) }).toEqual({ origin, kind, cors: {} });
    }
  }
  for (const origin of origins) {
    const answers = await answersTo(send, origin, { cached });
    expect(Object.keys(answers)).toEqual(cached ? KINDS : UNCACHED_KINDS);
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
}

/*
 * CORS_ORIGINS as an operator may write it, with the origins a browser sends for it: two, on a
 * port, where a query of the feed is answered and then served again from the response cache; and
 * one (in capitals, with a trailing slash; a list of one is where Yoga's own options name that
 * origin to every caller), the listener alone in process: every kind of answer but those of the
 * response cache, whose CORS headers are those of every answer (`Cors.headersFor`, the one place
 * that reads the list). GraphiQL's page, sent as a hit is, is not asked for: compressing its 9 MB
 * costs about a second, more than the harness this saves.
 */
describe('CORS with CORS_ORIGINS set', () => {
  let two: Harness;
  let one: InProcessGateway;
  beforeAll(async () => {
    one = startInProcess({ env: { CORS_ORIGINS: 'HTTPS://App.Example.com/' }, logLevel: 'silent' });
    two = await startHarness({ env: { CORS_ORIGINS: `${APP},${ADMIN}` }, logLevel: 'silent' });
  });
  afterAll(async () => {
    await Promise.all([two?.close(), one?.close()]);
  });
  const onPort: Send = (path, init) => two.fetch(path, init).then(consumed);
  const inProcess: Send = (path, init) => one.request(path, init);

  it('answers only the listed origins (2 listed): none to null or any other', async () => {
    await expectOnlyListed(onPort, [APP, ADMIN], { cached: true });
  });

  it('answers only the listed origins (1 listed): none to null or any other', async () => {
    await expectOnlyListed(inProcess, [APP], { cached: false });
  });

  it('answers cross-origin requests from memory with the CORS headers Yoga gives a miss', async () => {
    const harness = two;
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
    const { uncached, mutation } = await answersTo(inProcess, APP, { cached: false });
    expect(uncached.headers.get('access-control-allow-origin')).toBe(APP);
    expect(mutation.headers.get('access-control-allow-origin')).toBe(APP);
  });
});

/** A fetch answer whose body was read: its connection is free for the next request. */
async function consumed(response: Response) {
  await response.arrayBuffer();
  return response;
}
