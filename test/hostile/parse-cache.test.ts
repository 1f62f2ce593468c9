import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type InProcessGateway, startInProcess } from '../helpers/in-process.js';

/*
 * Finding: 1,100 distinct documents of about 250 KB each (`{ __typename }` and a long comment:
 * a comment is no token, so MAX_TOKENS let them through, and each body was under MAX_BODY_BYTES),
 * over 4 connections, took the production heap from 36 to 253 MB in 18 s, then "Reached heap
 * limit": Yoga's parse cache kept 1,024 documents keyed by their whole text, each document holding
 * that text again. Now the cache is bounded in bytes (`ParserCache`, 16 MiB), documents and parse
 * errors alike.
 *
 * Finding (issue 36): 20,000 distinct unparseable APQ registrations kept 189 MiB after a full
 * collection: the cached `GraphQLError`s' stack traces (frames that V8 keeps, closures and all,
 * until `stack` is read) held each request's IncomingMessage and response, 11 KB a failure, and a
 * document's validation errors 70 KB. Now a failure is kept as a record (message, positions,
 * extensions) and each answer gets a new error made from it.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The gateway runs in this process: what its heap retains, garbage collected first. */
const heapMiB = () => {
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

const DOCUMENT_BYTES = 200_000;
/** Unbounded, they would keep 400 × 200 KB of text, twice over for the errors' messages. */
const DOCUMENTS = 400;

/** The listener alone (what it keeps of documents it parses): in process. */
let gateway: InProcessGateway;
beforeAll(() => {
  gateway = startInProcess({ logLevel: 'silent' });
});
afterAll(async () => {
  await gateway?.close();
});

/** A distinct document of about `DOCUMENT_BYTES`: one field and a comment, or a syntax error. */
const documentOf = (i: number, broken: boolean) =>
  `{ __typename } # ${i} ${'x'.repeat(DOCUMENT_BYTES)}${broken ? '\n}' : ''}`;

async function post(query: string) {
  const response = await gateway.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
  });
  return {
    status: response.status,
    body: JSON.parse(response.text) as {
      data?: { __typename: string };
      errors?: { message: string }[];
    },
  };
}

describe('the parse cache', () => {
  it('keeps distinct large documents and parse errors within its bytes', async () => {
    // The first requests build what every request shares (loaders, compiled code).
    for (let i = 0; i < 8; i += 1) await post(documentOf(-1 - i, i % 2 === 1));
    const before = heapMiB();

    let next = 0;
    const answers: Awaited<ReturnType<typeof post>>[] = [];
    // Four connections, as the red team's client had.
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < DOCUMENTS) {
          const i = next++;
          answers[i] = await post(documentOf(i, i % 4 === 3));
        }
      }),
    );
    const grown = heapMiB() - before;

    // Every one answered as without a cache: the field, or where the syntax error is.
    answers.forEach((answer, i) => {
      expect(answer.status).toBe(200);
      if (i % 4 === 3) expect(answer.body.errors?.[0]?.message).toMatch(/^Syntax Error/);
      else expect(answer.body.data).toEqual({ __typename: 'Query' });
    });
    // Unbounded: over 100 MiB (80 MB of text, and the errors' as much again). Bounded: 16 MiB
    // of cache, and room for what else a request leaves (metrics series, compiled code).
    expect(grown).toBeLessThan(40);

    // Cached documents are still served from the cache: the same text answers the same.
    const again = await post(documentOf(DOCUMENTS - 1, false));
    expect(again.body.data).toEqual({ __typename: 'Query' });
  });
});

/** The body of an APQ registration: the text with its hash. */
const registration = (query: string) => ({
  query,
  extensions: {
    persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') },
  },
});

async function answer(body: unknown) {
  const response = await gateway.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: JSON.parse(response.text) };
}

describe('what the parse cache keeps of a request', () => {
  it('nothing: every request is collected once answered, however its document failed, and a failure kept is answered as the first time', async () => {
    const requests: WeakRef<IncomingMessage>[] = [];
    const track = (request: IncomingMessage) => requests.push(new WeakRef(request));
    gateway.server.on('request', track);
    const bodies = Array.from({ length: 100 }, (_, i) => [
      // An APQ registration that does not parse: the red team's flood.
      registration(`{ statusPage { name } # ${i}\n`),
      // A document that parses and fails validation, and one over a limit (MAX_ALIASES).
      { query: `{ statusPage { name nope${i} } }` },
      {
        query: `{ ${Array.from({ length: 40 }, (_, a) => `a${a}: statusPage { name }`).join(' ')} } # ${i}`,
      },
      // A valid one, kept as a document.
      { query: `{ __typename } # ${i}` },
    ]).flat();
    const first = [];
    for (const body of bodies) first.push(await answer(body));
    // Again: now from the cache, each answered as the first time.
    for (const [i, body] of bodies.entries()) expect(await answer(body)).toEqual(first[i]);
    gateway.server.off('request', track);

    expect(
      first.slice(0, 4).map(({ status, body }) => [status, body.errors?.[0]?.extensions]),
    ).toEqual([
      [400, { code: 'GRAPHQL_PARSE_FAILED' }],
      [400, { code: 'GRAPHQL_VALIDATION_FAILED' }],
      [400, { code: 'BAD_USER_INPUT', limit: 'MAX_ALIASES' }],
      [200, undefined],
    ]);
    expect(first[0]?.body.errors[0]).toMatchObject({
      message: 'Syntax Error: Expected Name, found <EOF>.',
      locations: [{ line: 2, column: 1 }],
    });
    expect(requests).toHaveLength(bodies.length * 2);
    // Each request's connection is closed with its answer (`Connection: close`): none is left.
    await eventually(() => gateway.openConnections() === 0);
    await eventually(() => {
      gc();
      return requests.every((request) => request.deref() === undefined);
    });
  });
});
