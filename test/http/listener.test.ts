import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PAGE_TREE_QUERY } from '../../src/http/page-tree-query.js';
import { fileClock } from '../helpers/clock.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { faultPage, pagePath, withOwnPages } from '../helpers/own-pages.js';
import { sessionEra } from '../helpers/session-era.js';
import { parseSse } from '../helpers/subscriptions.js';

const HIT = 'response_cache_reads_total{result="hit"}';
const MISS = 'response_cache_reads_total{result="miss"}';
const STORED = 'response_cache_reads_total{result="stored"}';
const PAGE_TREE_OK =
  'graphql_operation_duration_seconds_count{operation="PageTree",type="query",outcome="ok"}';

/** The page tree of page `slug`: `PAGE_TREE_QUERY` as it reads another page than the default. */
const pageTree = (slug: string) =>
  PAGE_TREE_QUERY.replace('statusPage {', `statusPage(slug: "${slug}") {`);

/**
 * One gateway for every test: each reads pages of its own (the default page is the `_entities`
 * test's), counts the requests, lines and series it adds, and moves the one clock forward only.
 */
describe('the response cache in front of Yoga', () => {
  const clock = fileClock();
  let harness: Harness;
  let url: string;
  beforeAll(async () => {
    harness = await startHarness(
      withOwnPages(
        [
          'repeat',
          'refetch',
          'slow',
          'crowd',
          'failed',
          'accept',
          'unkept',
          'down',
          'host',
          'ids',
          'undeclared',
          'stream',
        ],
        sessionEra({
          env: {
            STATUS_CACHE_TTL_MS: 100,
            UPSTREAM_RETRIES: 0,
            CIRCUIT_COOLDOWN_MS: 200,
            MAX_BODY_BYTES: 1_000,
          },
        }),
      ),
    );
    url = `${harness.origin}/graphql`;
  });
  afterAll(() => harness.close());

  /** The series' values and the log's length as the test started. */
  let before: Map<string, number>;
  let logsBefore: number;
  beforeEach(async () => {
    harness.simulator.clearFaults();
    harness.simulator.resetRequests();
    before = new Map(
      await Promise.all(
        [HIT, MISS, STORED, PAGE_TREE_OK].map(
          async (series) => [series, await harness.metric(series)] as const,
        ),
      ),
    );
    logsBefore = harness.logs.length;
  });
  /** What this test added to `series`. */
  const metric = async (series: string) =>
    (await harness.metric(series)) - (before.get(series) ?? 0);
  /** The lines the gateway logged since the test started. */
  const logs = () => harness.logs.slice(logsBefore);

  async function post(query: string, headers: Record<string, string> = {}) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query }),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }
  /** Upstream requests of page `slug`'s summary answered since the test started, as logged. */
  const summariesFetched = (slug: string) =>
    logs().filter(
      (line) =>
        line.msg === 'upstream request' &&
        line.upstream === `status feed of page ${slug}` &&
        line.path === '/summary.json',
    ).length;

  it('answers a repeated status query from memory, byte for byte, and counts it', async () => {
    // A second of its own: past the first 100 hits of a second, a hit gets no line of its own.
    clock.advance(1_000);
    const first = await post(pageTree('repeat'), { 'x-request-id': 'first' });
    const second = await post(pageTree('repeat'), { 'x-request-id': 'second' });
    expect(second.text).toBe(first.text);
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(second.headers.get('x-request-id')).toBe('second');
    expect(await metric(STORED)).toBe(1);
    expect(await metric(HIT)).toBe(1);
    expect(await metric(PAGE_TREE_OK)).toBe(2);
    expect(harness.simulator.requestCount(pagePath('repeat'))).toBe(1);
    const hit = logs().find((line) => line.msg === 'request' && line.cache === 'hit');
    expect(hit).toMatchObject({ requestId: 'second', status: 200, operation: 'PageTree' });
  });

  it('rebuilds the answer once the snapshot it came from is refetched', async () => {
    const query = '{ statusPage(slug: "refetch") { fetchedAt } }';
    const first = await post(query);
    clock.advance(100);
    // Past the TTL the last snapshot is served while it is refetched, so the answer built from it
    // is still the answer: from memory, with no freshness left; and the read starts the refetch.
    const revalidating = await post(query);
    expect(revalidating.text).toBe(first.text);
    expect(revalidating.headers.get('cache-control')).toMatch(/^public, max-age=0,/);
    expect(await metric(HIT)).toBe(1);
    // Once the refetch has landed, the next request rebuilds the answer from it.
    await eventually(() => harness.simulator.requestCount(pagePath('refetch')) === 2);
    const second = await eventually(async () => {
      const answer = await post(query);
      return answer.text !== first.text && answer;
    });
    expect(second.text).not.toBe(first.text);
    expect(harness.simulator.requestCount(pagePath('refetch'))).toBe(2);
    expect(await metric(STORED)).toBe(2);
  });

  it('answers from memory while a slow refetch is under way, never running the pipeline for it', async () => {
    const query = '{ statusPage(slug: "slow") { name status { indicator } } }';
    const first = await post(query);
    faultPage(harness.simulator, 'slow', { kind: 'delay', ms: 400 });
    clock.advance(100);
    // 30 requests while the one refetch takes 400 ms: each is a hit, none waits for it.
    const during = await Promise.all(Array.from({ length: 30 }, () => post(query)));
    for (const answer of during) {
      expect(answer.text).toBe(first.text);
      expect(answer.headers.get('cache-control')).toMatch(/^public, max-age=0,/);
    }
    expect(await metric(HIT)).toBe(30);
    expect(await metric(MISS)).toBe(0);
    // One refetch, on its way (the simulator counts a request as it arrives).
    await eventually(() => harness.simulator.requestCount(pagePath('slow')) === 2);
    // Once it lands, the answer is rebuilt from the new snapshot, once.
    faultPage(harness.simulator, 'slow', null);
    await eventually(async () => {
      await post(query);
      return (await metric(STORED)) === 2;
    });
    expect(harness.simulator.requestCount(pagePath('slow'))).toBe(2);
  });

  it('rebuilds an answer once when many clients ask for it as its snapshot is replaced', async () => {
    // On a clock that stands still, the new snapshot is still fresh when the 30 arrive.
    const query = pageTree('crowd');
    const first = await post(query);
    clock.advance(100);
    // Past the TTL: served from memory while the refetch runs; wait for it to land.
    await post(query);
    await eventually(() => summariesFetched('crowd') === 2);
    const stored = await metric(STORED);
    // 30 at once: one runs the pipeline, the others wait for its answer.
    const answers = await Promise.all(Array.from({ length: 30 }, () => post(query)));
    for (const answer of answers) expect(answer.text).toBe((answers[0] as { text: string }).text);
    expect((answers[0] as { text: string }).text).not.toBe(first.text);
    expect(await metric(STORED)).toBe(stored + 1);
    expect(await metric(HIT)).toBe(1 + 29);
    expect(await metric(PAGE_TREE_OK)).toBe(32);
  });

  it('stops serving the fresh answer once a refetch has failed: the stale answer says so', async () => {
    const query = '{ statusPage(slug: "failed") { stale } }';
    await post(query);
    faultPage(harness.simulator, 'failed', { kind: 'status', status: 503 });
    clock.advance(100);
    // The first read past the TTL starts the refetch, which fails.
    await post(query);
    await eventually(() =>
      logs().some(
        (line) =>
          line.msg === 'status feed failed; serving the last good snapshot' &&
          line.upstream === 'status feed of page failed',
      ),
    );
    const after = await post(query);
    expect(JSON.parse(after.text)).toEqual({ data: { statusPage: { stale: true } } });
    expect(after.headers.get('cache-control')).toBe('no-store');
  });

  it('keeps answers apart by Accept header', async () => {
    const query = '{ statusPage(slug: "accept") { name } }';
    await post(query);
    const strict = await post(query, { accept: 'application/graphql-response+json' });
    expect(strict.headers.get('content-type')).toContain('application/graphql-response+json');
    const again = await post(query, { accept: 'application/graphql-response+json' });
    expect(again.headers.get('content-type')).toContain('application/graphql-response+json');
  });

  it('never keeps mutations, answers that read the verification service, or answers with errors', async () => {
    const mutation = `mutation { verifyContract(input: { address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", chainId: "1" }) { __typename } }`;
    await post(mutation);
    const again = await post(mutation);
    expect(again.text).toContain('VerificationResult');
    expect(harness.simulator.requestCount('/verify/session/verify/etherscan')).toBe(2);

    await post('{ supportedChains { id } statusPage(slug: "unkept") { name } }');
    await post('{ statusPage(slug: "unkept") { nope } }');
    await post('{ statusPage(slug: "unkept") { nope } }');
    expect(await metric(HIT)).toBe(0);
    expect(await metric(STORED)).toBe(0);
  });

  it('serves the answer built from the last good snapshot from memory while the feed is down, for no one else to keep', async () => {
    const query = '{ statusPage(slug: "down") { stale fetchedAt } }';
    const good = await post(query);
    faultPage(harness.simulator, 'down', { kind: 'status', status: 503 });
    clock.advance(100);
    // The first read past the TTL starts the refetch, which fails: the snapshot stands in.
    await post(query);
    await eventually(async () => JSON.parse((await post(query)).text).data.statusPage.stale);
    const stale = await post(query);
    const during = await Promise.all(Array.from({ length: 20 }, () => post(query)));
    const { fetchedAt } = JSON.parse(good.text).data.statusPage;
    expect(JSON.parse(stale.text)).toEqual({ data: { statusPage: { stale: true, fetchedAt } } });
    for (const answer of [stale, ...during]) {
      expect(answer.text).toBe(stale.text);
      expect(answer.headers.get('cache-control')).toBe('no-store');
    }
    const hits = await metric(HIT);
    expect(hits).toBeGreaterThanOrEqual(21);
    // Each of those hits was a read that retried the feed (the open circuit answered most).
    expect(harness.simulator.requestCount(pagePath('down'))).toBeGreaterThan(2);

    // The feed is back: once the circuit lets a read try it again, the first good refetch ends
    // the stand-in, and its answers with it.
    faultPage(harness.simulator, 'down', null);
    clock.advance(200);
    const fresh = await eventually(async () => {
      const answer = await post(query);
      return JSON.parse(answer.text).data.statusPage.stale === false && answer;
    });
    expect(JSON.parse(fresh.text).data.statusPage.fetchedAt).not.toBe(fetchedAt);
    expect(fresh.headers.get('cache-control')).toMatch(/^public, max-age=/);
  });

  it('answers a Host header that is not a host with 400, never a stack trace', async () => {
    const query = '{ statusPage(slug: "host") { name } }';
    const send = (method: string, path: string, body?: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const request = httpRequest(
          {
            host: '127.0.0.1',
            port: Number(new URL(url).port),
            method,
            path,
            headers: {
              host: 'not a valid host[',
              ...(body
                ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
                : {}),
            },
          },
          (response) => {
            let text = '';
            response.on('data', (chunk) => {
              text += String(chunk);
            });
            response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    // The front door remembers the last good Host: a bad one after it is still refused.
    expect((await post(query)).status).toBe(200);
    for (const answer of [
      await send('POST', '/graphql', JSON.stringify({ query })),
      await send('GET', '/graphql?query=%7B__typename%7D'),
      await send('GET', '/health'),
    ]) {
      expect(answer.status).toBe(400);
      expect(answer.text).not.toMatch(/TypeError|at new URL/);
    }
  });

  it('gives every request without a usable id a UUID of its own, hits included', async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const ids = new Set<string>();
    // More than one batch of ids (128), with unsafe ids that must be replaced among them.
    for (let i = 0; i < 300; i += 1) {
      const answer = await post('{ statusPage(slug: "ids") { name } }', {
        'x-request-id': i % 3 === 0 ? 'bad id\twith "quotes"' : '',
      });
      const id = answer.headers.get('x-request-id') ?? '';
      expect(id).toMatch(uuid);
      ids.add(id);
    }
    expect(ids.size).toBe(300);
    expect(await metric(HIT)).toBe(299);
  });

  it('still refuses a cross-site form post and an oversized body', async () => {
    // MAX_BODY_BYTES is 1,000 here.
    const form = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ query: '{ statusPage { name } }' }),
    });
    expect(form.status).toBe(400);
    const big = await post(`{ statusPage { name } } # ${'x'.repeat(2_000)}`);
    expect(big.status).toBe(413);
  });

  it('never serves from memory an answer that selected an undeclared field', async () => {
    // `supportedChains` (the verification service's chains) is not declared as reading status
    // snapshots, so the answer it is in is not kept, even though the rest of it is (and reads a
    // snapshot).
    const query = '{ statusPage(slug: "undeclared") { name } supportedChains { id } }';
    const first = await post(query);
    const second = await post(query);
    expect(first.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(await metric(STORED)).toBe(0);
    expect(await metric(HIT)).toBe(0);
  });

  it('never keeps an answer that read no snapshot', async () => {
    await post('{ __typename }');
    await post('{ __typename }');
    expect(await metric(STORED)).toBe(0);
  });

  it('streams an event stream through, unbuffered and never kept', async () => {
    const ask = () =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: '{ statusPage(slug: "stream") { name } }' }),
      });
    for (const response of [await ask(), await ask()]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(response.headers.get('content-length')).toBeNull();
      const events = parseSse(await response.text()).filter(({ event }) => event);
      expect(events).toEqual([
        { event: 'next', data: expect.stringMatching(/^\{"data":\{"statusPage":\{"name":/) },
        { event: 'complete', data: '' },
      ]);
    }
    expect(await metric(STORED)).toBe(0);
    expect(await metric(HIT)).toBe(0);
  });

  it('keeps _entities answers over status entities, never one that looked a contract up', async () => {
    const entities = (representations: unknown[]) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: 'query ($r: [_Any!]!) { _entities(representations: $r) { __typename } }',
          variables: { r: representations },
        }),
      }).then((response) => response.json());
    // The default page's: no other test reads it.
    const componentId = harness.simulator.statusFeed.summary.components[0]?.id;
    const components = [{ __typename: 'Component', id: componentId }];
    await entities(components);
    expect(await entities(components)).toEqual({
      data: { _entities: [{ __typename: 'Component' }] },
    });
    expect(await metric(HIT)).toBe(1);

    // Only __typename is selected, so no Contract field resolves: the lookup itself must count.
    const mixed = [
      ...components,
      {
        __typename: 'Contract',
        chainId: '1',
        address: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
      },
    ];
    await entities(mixed);
    await entities(mixed);
    expect(await metric(HIT)).toBe(1);
    expect(await metric(STORED)).toBe(1);
  });
});
