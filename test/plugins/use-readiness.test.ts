import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('/health and /readiness', () => {
  let harness: Harness;
  afterEach(() => harness.close());

  const get = async (path: string) => {
    const response = await harness.fetch(path);
    return { status: response.status, body: await response.text() };
  };

  it('answers /health while the process runs, whatever the upstreams do', async () => {
    harness = await startHarness();
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    expect((await get('/health')).status).toBe(200);
  });

  it('is ready when the status feed answers', async () => {
    harness = await startHarness();
    const { status, body } = await get('/readiness');
    expect(status).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ ready: true, statusFeed: { stale: false } });
  });

  it('is not ready when the feed is down and no snapshot is held, and says why', async () => {
    harness = await startHarness({ env: { UPSTREAM_RETRIES: 0 } });
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    await get('/readiness');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { status, body } = await get('/readiness');
    expect(status).toBe(503);
    expect(JSON.parse(body)).toEqual({
      ready: false,
      reason: 'The status feed GET /summary.json is unavailable: it answered HTTP 503',
    });
  });

  it('stays ready on a recent snapshot while the feed is down', async () => {
    harness = await startHarness({ env: { STATUS_CACHE_TTL_MS: 0, UPSTREAM_RETRIES: 0 } });
    await get('/readiness');
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    await get('/readiness');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { status, body } = await get('/readiness');
    expect(status).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ ready: true, statusFeed: { stale: true } });
  });
});
