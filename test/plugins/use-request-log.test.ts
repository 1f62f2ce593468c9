import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testClock } from '../helpers/clock.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';

/*
 * Every line the gateway logs is kept (at debug, its default in tests): each test of the shared
 * gateway reads the lines of its own requests, by their ids.
 */
describe('request ids and the request log, on one gateway at its defaults', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());
  const requestLines = () => harness.logs.filter((line) => line.msg === 'request');

  it('logs one line per request, echoes the id and sends it upstream', async () => {
    const { headers } = await harness.execute('query Banner { statusPage { name } }', undefined, {
      headers: { 'x-request-id': 'req-123' },
    });
    expect(headers.get('x-request-id')).toBe('req-123');
    expect(harness.simulator.requests.at(-1)?.headers['x-request-id']).toBe('req-123');
    const lines = requestLines().filter((line) => line.requestId === 'req-123');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      requestId: 'req-123',
      method: 'POST',
      path: '/graphql',
      status: 200,
      operation: 'Banner',
    });
  });

  it('makes up an id when the caller sends none or an unsafe one', async () => {
    const first = await harness.execute('{ __typename }');
    const second = await harness.execute('{ __typename }', undefined, {
      headers: { 'x-request-id': 'bad id\twith spaces' },
    });
    const uuid = /^[0-9a-f-]{36}$/;
    expect(first.headers.get('x-request-id')).toMatch(uuid);
    expect(second.headers.get('x-request-id')).toMatch(uuid);
  });

  it('never logs the query string of a GET', async () => {
    await harness.fetch(
      `/graphql?query=${encodeURIComponent('{ statusPage { name } }')}&secret=s3cr3t`,
      { headers: { 'x-request-id': 'the-get' } },
    );
    const line = requestLines().find((candidate) => candidate.requestId === 'the-get');
    expect(line).toBeDefined();
    expect(line?.path).toBe('/graphql');
    expect(JSON.stringify(harness.logs)).not.toContain('s3cr3t');
  });

  it('writes a response-cache hit the line pino would', async () => {
    const query = 'query Banner { statusPage { name } }';
    await harness.execute(query);
    await harness.execute(query, undefined, { headers: { 'x-request-id': 'the-hit' } });
    const hit = requestLines().find((line) => line.requestId === 'the-hit');
    expect(hit).toEqual({
      level: 30,
      time: expect.any(Number),
      service: 'ledger-status-gateway',
      requestId: 'the-hit',
      method: 'POST',
      path: '/graphql',
      status: 200,
      ms: expect.any(Number),
      operation: 'Banner',
      cache: 'hit',
      msg: 'request',
    });
  });
});

describe('request ids and the request log, each on a gateway of its own configuration', () => {
  let harness: Harness;
  afterEach(() => harness.close());

  it('names the error code of every 4xx and of every answer with errors, whichever step refused it', async () => {
    harness = await startHarness({ env: { MAX_BODY_BYTES: 1_000 } });
    const post = (body: string, contentType = 'application/json') =>
      harness.fetch('/graphql', {
        method: 'POST',
        headers: {
          'content-type': contentType,
          'x-request-id': `req-${contentType.length}-${body.length}`,
        },
        body,
      });
    const refused = [
      await post('{ statusPage { name } }', 'text/plain'),
      await post(JSON.stringify({ query: `{ statusPage { name } } #${'x'.repeat(2_000)}` })),
      await post(JSON.stringify({ query: '{ statusPage { nope } }' })),
      await post('{not json'),
    ];
    const lines = harness.logs.filter((line) => line.msg === 'request');
    expect(lines.map(({ status, code }) => ({ status, code }))).toEqual([
      { status: 400, code: 'CSRF_BLOCKED' },
      { status: 413, code: 'PAYLOAD_TOO_LARGE' },
      // A JSON client gets its GraphQL errors with 200 (GraphQL over HTTP); the line says why all the same.
      { status: 200, code: 'GRAPHQL_VALIDATION_FAILED' },
      { status: 400, code: 'BAD_REQUEST' },
    ]);
    expect(refused.map((response) => response.status)).toEqual([400, 413, 200, 400]);
  });

  it('logs the result type of verifyContract, which answers 200 whatever happened', async () => {
    harness = await startHarness({ env: { UPSTREAM_RETRIES: 0 } });
    harness.simulator.setFault('verify', '*', { kind: 'status', status: 502 });
    const { status, body } = await harness.execute(
      'mutation { first: verifyContract(input: { address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", chainId: "1" }) { __typename } }',
    );
    expect(status).toBe(200);
    expect(body.data).toEqual({ first: { __typename: 'UpstreamUnavailableError' } });
    const line = harness.logs.find((candidate) => candidate.msg === 'request');
    expect(line).toMatchObject({ status: 200, results: { first: 'UpstreamUnavailableError' } });
  });

  it('puts the request id on every line the request causes: upstream failures, the circuit, stale snapshots', async () => {
    harness = await startHarness({
      logLevel: 'info',
      env: { UPSTREAM_RETRIES: 0, CIRCUIT_FAILURE_THRESHOLD: 1, STATUS_CACHE_TTL_MS: 0 },
    });
    await harness.execute('{ statusPage { name } }', undefined, {
      headers: { 'x-request-id': 'warm-up' },
    });
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    await harness.execute('{ statusPage { name } }', undefined, {
      headers: { 'x-request-id': 'req-failing' },
    });
    const caused = (msg: string) => harness.logs.filter((line) => line.msg === msg);
    await eventually(() => caused('upstream circuit open').length > 0);
    expect(caused('upstream request failed')).toEqual([
      expect.objectContaining({ requestId: 'req-failing', upstream: 'status feed' }),
    ]);
    expect(caused('upstream circuit open')).toEqual([
      expect.objectContaining({ requestId: 'req-failing', upstream: 'status feed' }),
    ]);
    expect(caused('status feed failed; serving the last good snapshot')).toEqual([
      expect.objectContaining({ requestId: 'req-failing' }),
    ]);
  });

  it('lets LOG_REQUESTS choose which lines go out', async () => {
    const countOf = async (series: string) => {
      const text = await (await harness.fetch('/metrics')).text();
      const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    };
    const requestLines = () => harness.logs.filter((line) => line.msg === 'request');
    const query = 'query Banner { statusPage { name } }';

    harness = await startHarness({ logLevel: 'info', env: { LOG_REQUESTS: 'uncached' } });
    for (let i = 0; i < 3; i += 1) await harness.execute(query);
    expect(requestLines()).toHaveLength(1);
    expect(await countOf('http_requests_total{route="/graphql",status="200"}')).toBe(3);
    await harness.close();

    harness = await startHarness({ logLevel: 'info', env: { LOG_REQUESTS: 'errors' } });
    await harness.execute(query);
    await harness.execute(query);
    await harness.execute('{ statusPage { nmae } }');
    expect(requestLines()).toEqual([
      expect.objectContaining({ status: 200, code: 'GRAPHQL_VALIDATION_FAILED' }),
    ]);
    expect(await countOf('http_requests_total{route="/graphql",status="200"}')).toBe(3);
  });

  it('by default writes a line for the first hits of each second and counts the rest', async () => {
    // All in one second of a clock the test moves, however long they take.
    const clock = testClock();
    harness = await startHarness({ logLevel: 'info', env: { LOG_SAMPLED_HITS_PER_SECOND: 5 } });
    const query = 'query Banner { statusPage { name } }';
    const hits = 60;
    for (let i = 0; i <= hits; i += 1) await harness.execute(query);
    clock.advance(1_000);
    const hitLines = () => harness.logs.filter((line) => line.msg === 'request' && line.cache);
    const skippedLines = () => harness.logs.filter((line) => line.msg === 'request lines skipped');
    const skipped = () => skippedLines().reduce((sum, line) => sum + Number(line.skipped), 0);
    // Every hit is either a line of its own or counted, once its second is over.
    await eventually(() => hitLines().length + skipped() === hits);
    expect(hitLines()).toHaveLength(5);
    expect(skipped()).toBe(hits - 5);
    expect(skippedLines()[0]).toMatchObject({
      level: 30,
      cache: 'hit',
      second: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/),
    });
    // The miss that stored the answer is logged whatever the sampling.
    expect(harness.logs.filter((line) => line.msg === 'request' && !line.cache)).toHaveLength(1);
  });
});
