import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';

let harness: Harness;
const get = async (path: string) => {
  const response = await harness.fetch(path);
  return { status: response.status, body: await response.text() };
};

describe('/health and /readiness, on one gateway at its defaults', () => {
  let shared: Harness;
  beforeAll(async () => {
    shared = await startHarness();
  });
  beforeEach(() => {
    harness = shared;
    shared.simulator.clearFaults();
  });
  afterAll(() => shared.close());

  it('answers /health while the process runs, whatever the upstreams do', async () => {
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    expect((await get('/health')).status).toBe(200);
  });

  it('is ready when the status feed answers, and reports it', async () => {
    const { status, body } = await get('/readiness');
    expect(status).toBe(200);
    expect(JSON.parse(body)).toEqual({
      ready: true,
      statusFeed: { state: 'ok', fetchedAt: expect.any(String) },
    });
  });

  it('answers at GET /readiness only: a GraphQL GET whose URL ends with /readiness is GraphQL', async () => {
    const { status, body } = await get(
      `/graphql?query=${encodeURIComponent('{ statusPage { name } }')}&next=/readiness`,
    );
    expect(status).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ data: { statusPage: { name: expect.any(String) } } });
  });
});

describe('/health and /readiness, each on a gateway of its own configuration', () => {
  afterEach(() => harness.close());

  it('stays ready when the feed is down with no snapshot: it reports why, and verification still answers', async () => {
    harness = await startHarness({ env: { UPSTREAM_RETRIES: 0 } });
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    const { status, body } = await get('/readiness');
    expect(status).toBe(200);
    expect(JSON.parse(body)).toEqual({
      ready: true,
      statusFeed: {
        state: 'unavailable',
        reason: 'The status feed GET /summary.json is unavailable: it answered HTTP 503',
      },
    });
    const { body: verified } = await harness.execute(
      '{ contract(chainId: "1", address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2") { verified } }',
    );
    expect(verified.errors).toBeUndefined();
  });

  it('reports a stale snapshot while the feed is down', async () => {
    harness = await startHarness({ env: { STATUS_CACHE_TTL_MS: 0, UPSTREAM_RETRIES: 0 } });
    await get('/readiness');
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    // The probe past the TTL starts a refetch, which fails: the snapshot it had stands in.
    const { status, body } = await eventually(async () => {
      const answer = await get('/readiness');
      return JSON.parse(answer.body).statusFeed.state === 'stale' && answer;
    });
    expect(status).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ ready: true, statusFeed: { state: 'stale' } });
  });

  it('answers before the feed does when it hangs, reporting the check as under way', async () => {
    // The feed would answer a probe that waited for it with its failure, after 5 s.
    harness = await startHarness({ env: { STATUS_TIMEOUT_MS: 5_000, UPSTREAM_RETRIES: 0 } });
    harness.simulator.setFault('status', '*', { kind: 'hang' });
    const { status, body } = await get('/readiness');
    expect(status).toBe(200);
    expect(JSON.parse(body)).toEqual({ ready: true, statusFeed: { state: 'checking' } });
  });

  it('is not ready once shutting down, so that new requests go to other replicas', async () => {
    harness = await startHarness();
    harness.gateway.quiesce();
    const { status, body } = await get('/readiness');
    expect(status).toBe(503);
    expect(JSON.parse(body)).toMatchObject({ ready: false, reason: 'shutting down' });
  });
});
