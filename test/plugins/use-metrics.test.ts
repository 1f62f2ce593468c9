import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_TREE_QUERY } from '../../src/http/page-tree-query.js';
import { type Harness, startHarness } from '../helpers/harness.js';

/** The value of `series` in a scrape of /metrics, as Prometheus writes it (`name{labels}`). */
const valueIn = (text: string, series: string) => {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

/*
 * One gateway for the file, speaking APIv2 (the hostile test's job ids reach the upstream there,
 * never with the session API) with no retries (an upstream failure is one request). The first
 * describe counts every series from nothing: its requests are the file's first, sent before any
 * test runs whatever their order, and its scrape is taken then; the other tests count from their
 * own start.
 */
let harness: Harness;
/** /metrics once the first describe's requests are answered, before any test ran. */
let text: string;
beforeAll(async () => {
  harness = await startHarness({
    logLevel: 'silent',
    env: { VERIFY_API: 'v2', UPSTREAM_RETRIES: 0 },
  });
  harness.simulator.setFault('status', '*', { kind: 'delay', ms: 30 }, { times: 2 });
  await Promise.all([harness.execute(PAGE_TREE_QUERY), harness.execute(PAGE_TREE_QUERY)]);
  // Answered by the response cache: counted as an operation, no snapshot read.
  await harness.execute(PAGE_TREE_QUERY);
  // Another query over the same snapshot: a snapshot cache hit.
  await harness.execute('{ statusPage { name } }');
  await harness.execute('query Broken { component(id: 1) { nope } }');
  harness.simulator.setFault('verify', '*', { kind: 'status', status: 502 });
  await harness.execute(
    'mutation Verify { verifyContract(input: { address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", chainId: "1" }) { __typename } }',
  );
  harness.simulator.clearFaults();
  const response = await harness.fetch('/metrics');
  expect(response.headers.get('content-type')).toContain('text/plain');
  text = await response.text();
});
afterAll(() => harness.close());

describe('/metrics', () => {
  const value = (series: string) => valueIn(text, series);

  it('counts operations by name, type and outcome', () => {
    expect(
      value(
        'graphql_operation_duration_seconds_count{operation="PageTree",type="query",outcome="ok"}',
      ),
    ).toBe(3);
    expect(
      value(
        'graphql_operation_duration_seconds_count{operation="Verify",type="mutation",outcome="ok"}',
      ),
    ).toBe(1);
  });

  it('times upstream requests by endpoint and status', () => {
    expect(
      value(
        'upstream_request_duration_seconds_count{upstream="status_feed",method="GET",endpoint="/summary.json",status="200"}',
      ),
    ).toBe(1);
    expect(
      value(
        'upstream_request_duration_seconds_count{upstream="verification_service",method="POST",endpoint="/v2/verify/etherscan/:param/:param",status="502"}',
      ),
    ).toBe(1);
  });

  it('counts cache hits, misses and coalesced reads', () => {
    expect(value('snapshot_cache_reads_total{endpoint="/summary.json",result="miss"}')).toBe(1);
    expect(value('snapshot_cache_reads_total{endpoint="/summary.json",result="coalesced"}')).toBe(
      1,
    );
    expect(value('snapshot_cache_reads_total{endpoint="/summary.json",result="hit"}')).toBe(1);
  });

  it('counts HTTP requests by route and status', () => {
    expect(value('http_requests_total{route="/graphql",status="200"}')).toBeGreaterThanOrEqual(4);
  });
});

describe('/metrics for operators', () => {
  it('has process and runtime metrics, request durations and errors by code', async () => {
    const scrape = async () => (await harness.fetch('/metrics')).text();
    const errors = (text: string, code: string) =>
      valueIn(text, `graphql_errors_total{code="${code}"}`) ?? 0;
    const before = await scrape();
    await harness.execute('{ statusPage { nope } }');
    await harness.execute('{ component(id: "x") { name } }');
    // Over MAX_ALIASES: refused before execution, still counted.
    await harness.execute(
      `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: statusPage { name }`).join(' ')} }`,
    );
    const text = await scrape();
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(text).toContain(`${name} `);
    }
    expect(text).toMatch(
      /^http_request_duration_seconds_count\{route="\/graphql",status="200"\} \d+/m,
    );
    // One of each since the test began.
    for (const code of ['GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT']) {
      expect({ code, counted: errors(text, code) - errors(before, code) }).toEqual({
        code,
        counted: 1,
      });
    }
  });
});

describe('/metrics under hostile input', () => {
  it('keeps the number of series bounded whatever clients send', async () => {
    // The series labelled from client input; process metrics come and go on their own.
    const CLIENT_LABELLED = /^(graphql_operation|http_request|upstream_request|graphql_errors)/;
    const series = async () =>
      (await (await harness.fetch('/metrics')).text())
        .split('\n')
        .filter((line) => CLIENT_LABELLED.test(line));
    const before = (await series()).length;
    for (let i = 0; i < 300; i += 1) {
      await harness.execute(`query Op${i} { statusPage { name } }`);
      await harness.fetch(`/p${i}`);
    }
    for (let chain = 1; chain <= 40; chain += 1) {
      await harness.execute(
        `{ contract(chainId: "${chain}", address: "0x${'ab'.repeat(20)}") { verified } }`,
      );
    }
    await harness.execute(
      '{ verificationJob(id: "00000000-0000-4000-8000-000000000000") { __typename } }',
    );
    // A 200 KB id never becomes a label.
    await harness.execute('query($id: ID!) { verificationJob(id: $id) { __typename } }', {
      id: `job-${'9'.repeat(200_000)}`,
    });
    const lines = await series();
    expect(lines.every((line) => line.length < 300)).toBe(true);
    const operations = new Set(
      lines
        .filter((line) => line.startsWith('graphql_operation_duration_seconds_count'))
        .map((line) => /operation="([^"]*)"/.exec(line)?.[1]),
    );
    expect(operations.size).toBeLessThanOrEqual(102);
    expect(operations).toContain('other');
    const routes = new Set(
      lines
        .filter((line) => line.startsWith('http_requests_total'))
        .map((line) => /route="([^"]*)"/.exec(line)?.[1]),
    );
    expect([...routes].sort()).toEqual(['/graphql', '/metrics', 'other']);
    const endpoints = new Set(
      lines
        .filter((line) => line.startsWith('upstream_request_duration_seconds_count'))
        .map((line) => /endpoint="([^"]*)"/.exec(line)?.[1]),
    );
    expect(endpoints).toContain('/v2/contract/:param/:param');
    expect([...endpoints].every((endpoint) => !/\d{2,}|0x/.test(endpoint ?? ''))).toBe(true);
    // Once the first 100 names are taken, more distinct names, paths and chains add nothing. (An
    // upstream status a loaded machine brings, a timeout, may add a series: it is not the client's.)
    const clientLabels = (scraped: string[]) =>
      new Set(
        scraped.flatMap((line) =>
          [...line.matchAll(/(?:operation|route|endpoint)="[^"]*"/g)].map(String),
        ),
      );
    const labelled = clientLabels(lines);
    for (let i = 300; i < 600; i += 1) {
      await harness.execute(`query Op${i} { statusPage { name } }`);
      await harness.fetch(`/p${i}`);
    }
    expect(clientLabels(await series())).toEqual(labelled);
    expect(lines.length).toBeGreaterThan(before);
    // The whole scrape, process metrics included, stays under a fixed size (187 KB here, 100 names).
    const scrape = await (await harness.fetch('/metrics')).text();
    expect(scrape.length).toBeLessThan(256 * 1024);
    // 1,200 requests one after another: seconds on a quiet machine, more on a shared one.
  }, 90_000);
});
