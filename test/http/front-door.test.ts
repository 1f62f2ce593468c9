import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { startInProcess } from '../helpers/in-process.js';
import { faultPage, pagePath, withOwnPages } from '../helpers/own-pages.js';
import { openRawSocket } from '../helpers/raw-socket.js';

const APP = 'https://app.example.com';
const TINY = JSON.stringify({ query: '{ statusPage { status { indicator } } }' });
const SUBSCRIPTION = JSON.stringify({
  query: 'subscription { componentStatusChanged { component { id } } }',
});

/**
 * Every kind of answer the gateway gives, each with its own request id: a response-cache miss
 * and hit, an answer Yoga made that is not kept, a body too large for the cache's path, a probe,
 * a preflight, GraphiQL's page, an unknown path, and two SSE subscribers of one shared request.
 */
const REQUESTS: Record<string, RequestInit & { path?: string }> = {
  miss: { method: 'POST', body: TINY },
  hit: { method: 'POST', body: TINY },
  uncached: { method: 'POST', body: JSON.stringify({ query: '{ __typename }' }) },
  largeBody: {
    method: 'POST',
    body: JSON.stringify({ query: `{ __typename } # ${'x'.repeat(20_000)}` }),
  },
  probe: { method: 'GET', path: '/health' },
  preflight: {
    method: 'OPTIONS',
    headers: { 'access-control-request-method': 'POST' },
  },
  graphiql: { method: 'GET', headers: { accept: 'text/html' } },
  unknownPath: { method: 'GET', path: '/nowhere' },
};

/**
 * One gateway for the file but the test of a body cut off, whose LOG_REQUESTS differs and which
 * asks the listener alone: the page `leaves` is the departing client's, the default page the first
 * describe's; each test reads the lines and counts of its own requests.
 */
let harness: Harness;
beforeAll(async () => {
  harness = await startHarness(
    withOwnPages(['leaves'], {
      env: { CORS_ORIGINS: APP, LOG_REQUESTS: 'all', GRAPHIQL: 'true' },
    }),
  );
});
afterAll(() => harness.close());

/** The value of `http_requests_total` for `route` and `status` in `metrics` (a scrape). */
const counted = (metrics: string, route: string, status: number) =>
  Number(
    metrics
      .split('\n')
      .find((series) =>
        series.startsWith(`http_requests_total{route="${route}",status="${status}"} `),
      )
      ?.split(' ')
      .at(-1) ?? 0,
  );

describe('the front door', () => {
  const answers: Record<string, Response> = {};

  beforeAll(async () => {
    for (const [id, { path = '/graphql', headers, ...init }] of Object.entries(REQUESTS)) {
      answers[id] = await harness.fetch(path, {
        ...init,
        headers: {
          origin: APP,
          'x-request-id': id,
          'content-type': 'application/json',
          ...(headers as Record<string, string>),
        },
      });
      await answers[id].arrayBuffer();
    }
    // Two subscribers of one request share its subscription; each gets an answer of its own.
    for (const id of ['sse1', 'sse2']) {
      const controller = new AbortController();
      answers[id] = await harness.fetch('/graphql', {
        method: 'POST',
        body: SUBSCRIPTION,
        signal: controller.signal,
        headers: {
          origin: APP,
          'x-request-id': id,
          'content-type': 'application/json',
          accept: 'text/event-stream',
        },
      });
      controller.abort();
    }
  });

  it('gives every answer its request id, CORS headers and a Cache-Control, whoever made it', () => {
    for (const [id, answer] of Object.entries(answers)) {
      expect({ id, requestId: answer.headers.get('x-request-id') }).toEqual({ id, requestId: id });
      expect({ id, cors: answer.headers.get('access-control-allow-origin') }).toEqual({
        id,
        cors: APP,
      });
      expect({ id, vary: answer.headers.get('vary') }).toEqual({
        id,
        vary: expect.stringMatching(/\bOrigin\b/),
      });
      expect({ id, cacheControl: answer.headers.get('cache-control') }).toEqual({
        id,
        cacheControl: expect.any(String),
      });
    }
    expect(answers.hit?.headers.get('cache-control')).toMatch(/^public, max-age=/);
    expect(answers.uncached?.headers.get('cache-control')).toBe('no-store');
    // An event stream keeps Yoga's one value: a header its maker set is never sent twice.
    expect(answers.sse1?.headers.get('cache-control')).toBe('no-cache');
    expect(answers.preflight?.status).toBe(204);
    expect(answers.largeBody?.status).toBe(200);
    expect(answers.unknownPath?.status).toBe(404);
  });

  it('writes one log line and counts one HTTP request for every answer, hits and shared streams included', async () => {
    const linesOf = () => {
      const lines = harness.logs.filter((line) => line.msg === 'request');
      return Object.fromEntries(
        Object.keys(answers).map((id) => [
          id,
          lines.filter((line) => line.requestId === id).length,
        ]),
      );
    };
    // The streams' lines come as their heads are written, after the fetches resolved.
    await eventually(() => linesOf().sse2 === 1);
    expect(linesOf()).toEqual(Object.fromEntries(Object.keys(answers).map((id) => [id, 1])));
    const line = (id: string) =>
      harness.logs.find((candidate) => candidate.msg === 'request' && candidate.requestId === id);
    expect(line('hit')).toMatchObject({ status: 200, cache: 'hit', path: '/graphql' });
    expect(line('miss')).toMatchObject({ status: 200, path: '/graphql' });
    expect(line('sse2')).toMatchObject({ status: 200, path: '/graphql' });
    const metrics = await (await harness.fetch('/metrics')).text();
    const count = (route: string, status: number) => counted(metrics, route, status);
    // miss, hit, uncached, largeBody, graphiql, sse1, sse2; the preflight is a 204.
    expect(count('/graphql', 200)).toBe(7);
    expect(count('/graphql', 204)).toBe(1);
    expect(count('/health', 200)).toBe(1);
    expect(count('other', 404)).toBe(1);
  });
});

describe('a client that hangs up halfway through a body Yoga reads', () => {
  it('is logged at debug, not as an error of the gateway', async () => {
    // The harness logs at debug.
    const logsBefore = harness.logs.length;
    const logs = () => harness.logs.slice(logsBefore);
    const client = await openRawSocket(harness.origin);
    // Past the response cache's 16 KiB, so Yoga's adapter streams it.
    client.socket.write(
      'POST /graphql HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n' +
        'x-request-id: hangs-up\r\nContent-Length: 100000\r\n\r\n{"query":"',
      () => client.socket.destroy(),
    );
    await eventually(() => logs().some((line) => line.msg === 'the client went away'));
    expect(logs().filter((line) => Number(line.level) >= 50)).toEqual([]);
  });
});

describe('a client that hangs up halfway through its body', () => {
  it('gets a request line and a count with status 499, whichever path was reading it', async () => {
    // The listener alone, on a connection in process: no upstream is asked anything.
    const gateway = startInProcess({ env: { LOG_REQUESTS: 'errors' } });
    // A small JSON body is read by the response cache, one past its 16 KiB by Yoga.
    for (const [requestId, length] of [
      ['cache-reads', 100],
      ['yoga-reads', 100_000],
    ] as const) {
      const client = gateway.connect();
      client.write(
        'POST /graphql HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n' +
          `x-request-id: ${requestId}\r\nContent-Length: ${length}\r\n\r\n{"query":"`,
        () => client.destroy(),
      );
      await eventually(() =>
        gateway.logs.some((line) => line.msg === 'request' && line.requestId === requestId),
      );
    }
    const lines = gateway.logs.filter((line) => line.msg === 'request');
    expect(lines).toEqual([
      expect.objectContaining({ requestId: 'cache-reads', status: 499, path: '/graphql' }),
      expect.objectContaining({ requestId: 'yoga-reads', status: 499, path: '/graphql' }),
    ]);
    const metrics = (await gateway.request('/metrics')).text;
    expect(metrics).toContain('http_requests_total{route="/graphql",status="499"} 2');
    expect(gateway.logs.filter((line) => Number(line.level) >= 50)).toEqual([]);
    await gateway.close();
  });
});

describe('a client that leaves before its answer is ready', () => {
  it('gets a request line and a count with status 499, and nothing is written to its socket', async () => {
    const logsBefore = harness.logs.length;
    const logs = () => harness.logs.slice(logsBefore);
    const before = counted(await (await harness.fetch('/metrics')).text(), '/graphql', 499);
    // A page of its own, which the gateway has not read yet.
    const body = JSON.stringify({
      query: '{ statusPage(slug: "leaves") { status { indicator } } }',
    });
    faultPage(harness.simulator, 'leaves', { kind: 'delay', ms: 300 });
    const client = await openRawSocket(harness.origin);
    client.socket.write(
      'POST /graphql HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n' +
        `x-request-id: leaves\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // The gateway has the whole request and is waiting on the feed when the client goes.
    await eventually(() => harness.simulator.requestCount(pagePath('leaves')) > 0);
    client.socket.destroy();
    await eventually(() =>
      logs().some((line) => line.msg === 'request' && line.requestId === 'leaves'),
    );
    expect(
      logs().find((line) => line.msg === 'request' && line.requestId === 'leaves'),
    ).toMatchObject({ status: 499, path: '/graphql', method: 'POST' });
    const metrics = await (await harness.fetch('/metrics')).text();
    expect(counted(metrics, '/graphql', 499)).toBe(before + 1);
    expect(logs().filter((line) => Number(line.level) >= 50)).toEqual([]);
    faultPage(harness.simulator, 'leaves', null);
  });
});
