import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fileClock } from '../helpers/clock.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { withOwnPages } from '../helpers/own-pages.js';
import { sharedHarnesses } from '../helpers/shared-harness.js';

/** The hits a second with a line of their own (LOG_SAMPLED_HITS_PER_SECOND). */
const SAMPLED = 5;

/*
 * Every line the gateway logs is kept (at debug, its default in tests): each test reads the lines
 * of its own requests, from its own start. One gateway for every test but the one of LOG_REQUESTS,
 * which needs two more (`uncached` and `errors`, where the others need the default `sampled`).
 * Each setting of the shared one is one test's and leaves the others alone; each test reads pages
 * of its own (the default page is the request-id test's), on one clock for the file, moved forward
 * only: a test that counts hit lines starts a second of its own.
 */
describe('request ids and the request log', () => {
  const clock = fileClock();
  /** The gateways of the LOG_REQUESTS test, one per setting. */
  const modes = sharedHarnesses();
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(
      withOwnPages(['banner', 'the-get', 'the-hit', 'sampled'], {
        env: {
          MAX_BODY_BYTES: 1_000,
          UPSTREAM_RETRIES: 0,
          CIRCUIT_FAILURE_THRESHOLD: 1,
          LOG_SAMPLED_HITS_PER_SECOND: SAMPLED,
        },
      }),
    );
  });
  afterAll(() => Promise.all([harness.close(), modes.close()]));
  let logsBefore: number;
  beforeEach(() => {
    harness.simulator.clearFaults();
    harness.simulator.resetRequests();
    logsBefore = harness.logs.length;
  });
  /** The lines logged since the test started. */
  const logs = () => harness.logs.slice(logsBefore);
  const requestLines = () => logs().filter((line) => line.msg === 'request');

  it('logs one line per request, echoes the id and sends it upstream', async () => {
    const { headers } = await harness.execute(
      'query Banner { statusPage(slug: "banner") { name } }',
      undefined,
      {
        headers: { 'x-request-id': 'req-123' },
      },
    );
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
      `/graphql?query=${encodeURIComponent('{ statusPage(slug: "the-get") { name } }')}&secret=s3cr3t`,
      { headers: { 'x-request-id': 'the-get' } },
    );
    const line = requestLines().find((candidate) => candidate.requestId === 'the-get');
    expect(line).toBeDefined();
    expect(line?.path).toBe('/graphql');
    expect(JSON.stringify(logs())).not.toContain('s3cr3t');
  });

  it('writes a response-cache hit the line pino would', async () => {
    // A second of its own: past the first hits of a second, a hit gets no line of its own.
    clock.advance(1_000);
    const query = 'query Banner { statusPage(slug: "the-hit") { name } }';
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

  it('names the error code of every 4xx and of every answer with errors, whichever step refused it', async () => {
    // MAX_BODY_BYTES is 1,000 here.
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
    const lines = requestLines();
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
    harness.simulator.setFault('verify', '*', { kind: 'status', status: 502 });
    const { status, body } = await harness.execute(
      'mutation { first: verifyContract(input: { address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", chainId: "1" }) { __typename } }',
    );
    expect(status).toBe(200);
    expect(body.data).toEqual({ first: { __typename: 'UpstreamUnavailableError' } });
    const line = requestLines()[0];
    expect(line).toMatchObject({ status: 200, results: { first: 'UpstreamUnavailableError' } });
  });

  it('puts the request id on every line the request causes: upstream failures, the circuit, stale snapshots', async () => {
    // No retries, a circuit that opens on the first failure; the default page is this test's.
    await harness.execute('{ statusPage { name } }', undefined, {
      headers: { 'x-request-id': 'warm-up' },
    });
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    // Past the TTL (10 s), an operation no answer in memory is kept for: its resolver reads the
    // snapshot, which refetches the feed for it (an answer kept would revalidate for no one).
    clock.advance(10_000);
    await harness.execute('{ statusPage { name url } }', undefined, {
      headers: { 'x-request-id': 'req-failing' },
    });
    const caused = (msg: string) => logs().filter((line) => line.msg === msg);
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
    const query = 'query Banner { statusPage { name } }';
    const requestLines = (own: Harness) => own.logs.filter((line) => line.msg === 'request');
    const answered = (own: Harness) =>
      own.metric('http_requests_total{route="/graphql",status="200"}');

    const uncached = await modes.use({ logLevel: 'info', env: { LOG_REQUESTS: 'uncached' } });
    for (let i = 0; i < 3; i += 1) await uncached.execute(query);
    expect(requestLines(uncached)).toHaveLength(1);
    expect(await answered(uncached)).toBe(3);

    const errors = await modes.use({ logLevel: 'info', env: { LOG_REQUESTS: 'errors' } });
    await errors.execute(query);
    await errors.execute(query);
    await errors.execute('{ statusPage { nmae } }');
    expect(requestLines(errors)).toEqual([
      expect.objectContaining({ status: 200, code: 'GRAPHQL_VALIDATION_FAILED' }),
    ]);
    expect(await answered(errors)).toBe(3);
  });

  it('by default writes a line for the first hits of each second and counts the rest', async () => {
    // All in one second of the clock the tests move, however long they take; a second of its own.
    clock.advance(1_000);
    const query = 'query Banner { statusPage(slug: "sampled") { name } }';
    const hits = 60;
    for (let i = 0; i <= hits; i += 1) await harness.execute(query);
    clock.advance(1_000);
    const hitLines = () => logs().filter((line) => line.msg === 'request' && line.cache);
    const skippedLines = () => logs().filter((line) => line.msg === 'request lines skipped');
    const skipped = () => skippedLines().reduce((sum, line) => sum + Number(line.skipped), 0);
    // Every hit is either a line of its own or counted, once its second is over.
    await eventually(() => hitLines().length + skipped() === hits);
    expect(hitLines()).toHaveLength(SAMPLED);
    expect(skipped()).toBe(hits - SAMPLED);
    expect(skippedLines()[0]).toMatchObject({
      level: 30,
      cache: 'hit',
      second: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/),
    });
    // The miss that stored the answer is logged whatever the sampling.
    expect(logs().filter((line) => line.msg === 'request' && !line.cache)).toHaveLength(1);
  });
});
