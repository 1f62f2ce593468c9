import { afterEach, describe, expect, it } from 'vitest';
import { PAGE_TREE_QUERY } from '../../../src/http/page-tree-query.js';
import { testClock } from '../../helpers/clock.js';
import { type Harness, startHarness } from '../../helpers/harness.js';

const SUMMARY = '/status/api/v2/summary.json';
const UPCOMING = '/status/api/v2/scheduled-maintenances/upcoming.json';

describe('status feed data loading', () => {
  let harness: Harness;
  afterEach(() => harness.close());

  it('makes one request per endpoint for one operation, however many fields read it', async () => {
    harness = await startHarness({ env: { STATUS_CACHE_TTL_MS: 0 } });
    const { body } = await harness.execute(`{
      statusPage { name components { id } incidents { id components { id } } upcomingMaintenances { id } }
      again: statusPage { status { indicator } scheduledMaintenances { components { id } } }
      component(id: "x") { id }
      maintenance(id: "unknown-so-upcoming-is-read") { id }
    }`);
    expect(body.errors).toBeUndefined();
    expect(harness.simulator.requestCount(SUMMARY)).toBe(1);
    expect(harness.simulator.requestCount(UPCOMING)).toBe(1);
  });

  it('does not read an endpoint that no field needs', async () => {
    harness = await startHarness({ env: { STATUS_CACHE_TTL_MS: 0 } });
    await harness.execute('{ statusPage { name } }');
    expect(harness.simulator.requestCount(SUMMARY)).toBe(1);
    expect(harness.simulator.requestCount(UPCOMING)).toBe(0);
  });

  it('coalesces 50 identical operations on a cold cache into one upstream request', async () => {
    harness = await startHarness();
    harness.simulator.setFault('status', '*', { kind: 'delay', ms: 50 });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => harness.execute(PAGE_TREE_QUERY)),
    );
    for (const { status, body } of results) {
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
    }
    expect(harness.simulator.requestCount(SUMMARY)).toBe(1);
    expect(harness.simulator.requestCount(UPCOMING)).toBe(1);
  });

  it('serves from the shared cache within the TTL and fetches again after it', async () => {
    const clock = testClock();
    harness = await startHarness({ env: { STATUS_CACHE_TTL_MS: 200 } });
    const first = await harness.execute<{ statusPage: { fetchedAt: string } }>(
      '{ statusPage { fetchedAt } }',
    );
    const second = await harness.execute<{ statusPage: { fetchedAt: string } }>(
      '{ statusPage { fetchedAt } }',
    );
    expect(harness.simulator.requestCount(SUMMARY)).toBe(1);
    expect(second.body.data?.statusPage.fetchedAt).toBe(first.body.data?.statusPage.fetchedAt);

    clock.advance(200);
    // Past the TTL the last snapshot answers at once while one refetch runs.
    const third = await harness.executeAfterRefetch<{ statusPage: { fetchedAt: string } }>(
      '{ statusPage { fetchedAt } }',
    );
    expect(harness.simulator.requestCount(SUMMARY)).toBe(2);
    expect(Date.parse(third.body.data?.statusPage.fetchedAt ?? '')).toBeGreaterThan(
      Date.parse(first.body.data?.statusPage.fetchedAt ?? ''),
    );
  });

  it('shows a change of the feed once the TTL has passed', async () => {
    harness = await startHarness({ env: { STATUS_CACHE_TTL_MS: 0 } });
    const before = await harness.execute<{ statusPage: { status: { indicator: string } } }>(
      '{ statusPage { status { indicator } } }',
    );
    harness.simulator.updateStatusFeed((feed) => {
      feed.summary.status.indicator = 'critical';
    });
    const after = await harness.executeAfterRefetch<{
      statusPage: { status: { indicator: string } };
    }>('{ statusPage { status { indicator } } }');
    expect(before.body.data?.statusPage.status.indicator).not.toBe('CRITICAL');
    expect(after.body.data?.statusPage.status.indicator).toBe('CRITICAL');
  });
});
