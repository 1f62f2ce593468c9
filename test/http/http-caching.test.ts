import { readFileSync } from 'node:fs';
import { type IncomingHttpHeaders, request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PAGE_TREE_QUERY } from '../../src/http/page-tree-query.js';
import { DEFAULT_MANIFEST } from '../../src/persisted-documents/manifest.js';
import { fileClock } from '../helpers/clock.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { pagePath, withOwnPages } from '../helpers/own-pages.js';

/** The page tree of page `slug`: `PAGE_TREE_QUERY` as it reads another page than the default. */
const pageTree = (slug: string) =>
  PAGE_TREE_QUERY.replace('statusPage {', `statusPage(slug: "${slug}") {`);

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The bytes as sent, before any decoding. */
  body: Buffer;
}

/**
 * What a browser or a CDN sees of the gateway's answers: headers, status, and coded bytes. One
 * gateway for every test: each reads a page of its own (the default page is the documentId
 * test's), and moves the one clock forward only.
 */
describe('answers a CDN and a browser can cache', () => {
  const clock = fileClock();
  let harness: Harness;
  let logsBefore: number;
  beforeAll(async () => {
    harness = await startHarness(
      withOwnPages(['max-age', 'conditional', 'unchanged', 'compressed', 'tiny'], {
        env: { STATUS_CACHE_TTL_MS: 10_000, STATUS_MAX_STALE_MS: 300_000 },
      }),
    );
  });
  afterAll(() => harness.close());
  beforeEach(() => {
    harness.simulator.clearFaults();
    harness.simulator.resetRequests();
    logsBefore = harness.logs.length;
  });

  /** One request through node:http, so that the bytes are seen as sent (fetch would decode them). */
  function raw(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<RawAnswer> {
    const { port } = new URL(harness.origin);
    return new Promise((resolve, reject) => {
      const outgoing = request(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          headers: {
            accept: 'application/graphql-response+json, application/json;q=0.9',
            ...(body === undefined
              ? {}
              : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
            ...headers,
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: Buffer.concat(chunks),
            }),
          );
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  const get = (query: string, headers?: Record<string, string>) =>
    raw('GET', `/graphql?query=${encodeURIComponent(query)}`, headers);
  const post = (query: string, headers?: Record<string, string>) =>
    raw('POST', '/graphql', headers, JSON.stringify({ query }));
  const maxAge = (answer: RawAnswer) =>
    Number(/max-age=(\d+)/.exec(String(answer.headers['cache-control']))?.[1]);

  it('a GET of the page tree by documentId: Cache-Control and an ETag, 304 on If-None-Match, brotli on Accept-Encoding: br', async () => {
    const manifest = JSON.parse(readFileSync(DEFAULT_MANIFEST, 'utf8')) as Record<string, string>;
    const [documentId] =
      Object.entries(manifest).find(([, text]) => text.includes('query PageTree')) ?? [];
    const path = `/graphql?documentId=${documentId}`;

    const first = await raw('GET', path);
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toMatch(
      /^public, max-age=\d+, stale-while-revalidate=\d+, stale-if-error=\d+$/,
    );
    expect(first.headers.etag).toMatch(/^"[\w-]+"$/);
    const tree = JSON.parse(first.body.toString()) as { data: { statusPage: { name: string } } };
    expect(tree.data.statusPage.name).toBe(harness.simulator.statusFeed.summary.page.name);

    const notModified = await raw('GET', path, { 'if-none-match': String(first.headers.etag) });
    expect(notModified.status).toBe(304);
    expect(notModified.body.byteLength).toBe(0);

    const brotli = await raw('GET', path, { 'accept-encoding': 'br' });
    expect(brotli.status).toBe(200);
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(brotli.body).equals(first.body)).toBe(true);
  });

  it('gives a status answer a public Cache-Control from the snapshot and the stale window', async () => {
    // STATUS_CACHE_TTL_MS is 10 s, STATUS_MAX_STALE_MS 300 s.
    const answer = await get(pageTree('max-age'));
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toMatch(
      /^public, max-age=\d+, stale-while-revalidate=290, stale-if-error=290$/,
    );
    expect(maxAge(answer)).toBeGreaterThanOrEqual(8);
    expect(maxAge(answer)).toBeLessThanOrEqual(10);
    expect(answer.headers.vary).toBe('Accept, Accept-Encoding');
    expect(answer.headers.etag).toMatch(/^"[\w-]+"$/);
    // The same from memory, with the same validator.
    const again = await get(pageTree('max-age'));
    expect(again.headers.etag).toBe(answer.headers.etag);
    expect(again.body.equals(answer.body)).toBe(true);
  });

  // Cross-origin requests answered from memory with the CORS headers Yoga gives a miss: on
  // test/hostile/cors.test.ts's gateway, whose CORS_ORIGINS adds `Origin` to every answer's Vary.

  it('answers 304 without a body when If-None-Match names the answer, on GET and POST', async () => {
    const query = '{ statusPage(slug: "conditional") { name status { indicator } } }';
    for (const send of [get, post]) {
      const first = await send(query);
      const etag = String(first.headers.etag);
      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const conditional = await send(query, {
          'if-none-match': header,
        });
        expect(conditional.status).toBe(304);
        expect(conditional.body.byteLength).toBe(0);
        expect(conditional.headers.etag).toBe(etag);
        expect(conditional.headers['cache-control']).toMatch(/^public, max-age=/);
      }
      const changed = await send(query, {
        'if-none-match': '"something-else"',
      });
      expect(changed.status).toBe(200);
      expect(changed.body.equals(first.body)).toBe(true);
    }
  });

  it('keeps the ETag when the feed is refetched unchanged, so a conditional request still gets 304', async () => {
    const query = '{ statusPage(slug: "unchanged") { name } }';
    const first = await get(query);
    clock.advance(10_000);
    // Past the TTL: this read starts the refetch; the next comes once it has landed.
    await get(query);
    await eventually(
      () =>
        harness.logs
          .slice(logsBefore)
          .filter(
            (line) =>
              line.msg === 'upstream request' &&
              line.upstream === 'status feed of page unchanged' &&
              line.path === '/summary.json',
          ).length === 2,
    );
    const rebuilt = await get(query, {
      'if-none-match': String(first.headers.etag),
    });
    expect(harness.simulator.requestCount(pagePath('unchanged'))).toBe(2);
    expect(rebuilt.status).toBe(304);
  });

  it('compresses answers above 1 KiB with brotli or gzip as Accept-Encoding asks, q-values honoured', async () => {
    const query = pageTree('compressed');
    const identity = await get(query);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.body.byteLength).toBeGreaterThan(1024);

    const brotli = await get(query, { 'accept-encoding': 'gzip, deflate, br' });
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(Number(brotli.headers['content-length'])).toBe(brotli.body.byteLength);
    expect(brotli.body.byteLength).toBeLessThan(identity.body.byteLength / 3);
    expect(brotliDecompressSync(brotli.body).equals(identity.body)).toBe(true);
    expect(brotli.headers.etag).not.toBe(identity.headers.etag);

    const cases: [string, string | undefined][] = [
      ['gzip', 'gzip'],
      ['br;q=0.5, gzip;q=0.8', 'gzip'],
      ['x-gzip', 'gzip'],
      ['*', 'br'],
      ['br;q=0, *;q=0.3', 'gzip'],
      ['identity', undefined],
      ['br;q=0.5, identity', undefined],
      ['deflate', undefined],
      ['*;q=0', undefined],
      ['', undefined],
    ];
    for (const [acceptEncoding, expected] of cases) {
      const answer = await get(query, { 'accept-encoding': acceptEncoding });
      expect([acceptEncoding, answer.headers['content-encoding']]).toEqual([
        acceptEncoding,
        expected,
      ]);
      const decoded =
        expected === 'gzip'
          ? gunzipSync(answer.body)
          : expected === 'br'
            ? brotliDecompressSync(answer.body)
            : answer.body;
      expect(decoded.equals(identity.body)).toBe(true);
    }

    // The coded form has its own validator, and 304s on it.
    const conditional = await get(query, {
      'accept-encoding': 'br',
      'if-none-match': String(brotli.headers.etag),
    });
    expect(conditional.status).toBe(304);
    expect(conditional.headers.etag).toBe(brotli.headers.etag);
  });

  it('sends answers of 1 KiB and less uncoded', async () => {
    const tiny = await post('{ statusPage(slug: "tiny") { status { indicator } } }', {
      'accept-encoding': 'br',
    });
    expect(tiny.headers['content-encoding']).toBeUndefined();
    expect(tiny.headers.vary).toBe('Accept, Accept-Encoding');
    expect(JSON.parse(tiny.body.toString())).toMatchObject({
      data: { statusPage: { status: { indicator: expect.any(String) } } },
    });
  });

  it('marks answers that depend on the verification service, the session or errors no-store', async () => {
    const mutation = `mutation { verifyContract(input: { address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", chainId: "1" }) { __typename } }`;
    for (const answer of [
      await post(mutation),
      await post('{ supportedChains { id } }'),
      await post('{ statusPage { nope } }'),
      await get('{ supportedChains { id name } }', { 'accept-encoding': 'br' }),
    ]) {
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.headers.etag).toBeUndefined();
    }
    // A large uncacheable answer is still compressed, for this request alone.
    const chains = await get('{ supportedChains { id name supportsExplorerVerification } }', {
      'accept-encoding': 'gzip',
    });
    expect(chains.headers['cache-control']).toBe('no-store');
    if (Number(chains.headers['content-length']) > 0 && chains.headers['content-encoding']) {
      expect(JSON.parse(gunzipSync(chains.body).toString())).toHaveProperty('data');
    }
  });

  it('serves GraphiQL compressed, with an ETag and 304 on a reload', async () => {
    const page = await raw('GET', '/graphql', {
      accept: 'text/html,application/xhtml+xml',
      'accept-encoding': 'br, gzip',
    });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-encoding']).toBe('br');
    expect(page.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    const html = brotliDecompressSync(page.body).toString();
    expect(html).toContain('GraphiQL');
    expect(html).toContain('query PageTree');
    expect(page.body.byteLength).toBeLessThan(html.length / 3);

    const reload = await raw('GET', '/graphql', {
      accept: 'text/html',
      'accept-encoding': 'br, gzip',
      'if-none-match': String(page.headers.etag),
    });
    expect(reload.status).toBe(304);
    expect(reload.body.byteLength).toBe(0);
  });
});
