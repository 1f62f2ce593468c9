import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { startInProcess } from '../helpers/in-process.js';
import { freshDefaultPage } from '../helpers/own-pages.js';

/**
 * One gateway for the tests of the feed's state: it has one page, which each test points at a
 * feed of its own that no one has read yet (its snapshots and circuit its own). Each setting is
 * one test's and leaves the others alone: no retries (a failure is reported at once), a TTL of 0
 * (every probe reads the feed again), a feed timeout of 5 s (longer than a probe waits).
 */
const page = freshDefaultPage({
  env: { UPSTREAM_RETRIES: 0, STATUS_CACHE_TTL_MS: 0, STATUS_TIMEOUT_MS: 5_000 },
});
let harness: Harness;
beforeAll(async () => {
  harness = await startHarness(page.options);
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.simulator.clearFaults();
  expect(page.fresh(harness)).toBe(true);
});

const get = async (path: string) => {
  const response = await harness.fetch(path);
  return { status: response.status, body: await response.text() };
};

describe('/health and /readiness', () => {
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

  it('stays ready when the feed is down with no snapshot: it reports why, and verification still answers', async () => {
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
    harness.simulator.setFault('status', '*', { kind: 'hang' });
    const { status, body } = await get('/readiness');
    expect(status).toBe(200);
    expect(JSON.parse(body)).toEqual({ ready: true, statusFeed: { state: 'checking' } });
  });

  it('is not ready once shutting down, so that new requests go to other replicas', async () => {
    // A gateway of its own to shut down: the listener alone answers, asking no upstream.
    const gateway = startInProcess();
    gateway.gateway.quiesce();
    const { status, text } = await gateway.request('/readiness');
    expect(status).toBe(503);
    expect(JSON.parse(text)).toMatchObject({ ready: false, reason: 'shutting down' });
    await gateway.close();
  });
});
