import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PAGE_TREE_QUERY } from '../../../src/http/page-tree-query.js';
import { testClock } from '../../helpers/clock.js';
import { type Harness, startHarness } from '../../helpers/harness.js';
import { pagePath, withOwnPages } from '../../helpers/own-pages.js';

const SUMMARY = '/status/api/v2/summary.json';
const UPCOMING = '/status/api/v2/scheduled-maintenances/upcoming.json';
const upcomingOf = (slug: string) => `/status/${slug}/api/v2/scheduled-maintenances/upcoming.json`;

/*
 * Two gateways: one that re-reads the feed on every read (a TTL of 0), one with a TTL of 200 ms.
 * Each test reads a page no other test reads (the default page or one of its own), first.
 */
let rereads: Harness;
let ttl: Harness;
beforeAll(async () => {
  [rereads, ttl] = await Promise.all([
    startHarness(withOwnPages(['unread', 'changing'], { env: { STATUS_CACHE_TTL_MS: 0 } })),
    startHarness(withOwnPages(['cached'], { env: { STATUS_CACHE_TTL_MS: 200 } })),
  ]);
});
afterAll(() => Promise.all([rereads.close(), ttl.close()]));
beforeEach(() => {
  for (const { simulator } of [rereads, ttl]) {
    simulator.clearFaults();
    simulator.resetRequests();
  }
});

describe('status feed data loading', () => {
  it('makes one request per endpoint for one operation, however many fields read it', async () => {
    const { body } = await rereads.execute(`{
      statusPage { name components { id } incidents { id components { id } } upcomingMaintenances { id } }
      again: statusPage { status { indicator } scheduledMaintenances { components { id } } }
      component(id: "x") { id }
      maintenance(id: "unknown-so-upcoming-is-read") { id }
    }`);
    expect(body.errors).toBeUndefined();
    expect(rereads.simulator.requestCount(SUMMARY)).toBe(1);
    expect(rereads.simulator.requestCount(UPCOMING)).toBe(1);
  });

  it('does not read an endpoint that no field needs', async () => {
    await rereads.execute('{ statusPage(slug: "unread") { name } }');
    expect(rereads.simulator.requestCount(pagePath('unread'))).toBe(1);
    expect(rereads.simulator.requestCount(upcomingOf('unread'))).toBe(0);
  });

  it('coalesces 50 identical operations on a cold cache into one upstream request', async () => {
    // The clock stands still (the page is made after, and takes it): the first fetch stays fresh
    // for every operation, however late it arrives.
    testClock();
    ttl.simulator.setFault('status', '*', { kind: 'delay', ms: 50 });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => ttl.execute(PAGE_TREE_QUERY)),
    );
    for (const { status, body } of results) {
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
    }
    expect(ttl.simulator.requestCount(SUMMARY)).toBe(1);
    expect(ttl.simulator.requestCount(UPCOMING)).toBe(1);
  });

  it('serves from the shared cache within the TTL and fetches again after it', async () => {
    const clock = testClock();
    const query = '{ statusPage(slug: "cached") { fetchedAt } }';
    const first = await ttl.execute<{ statusPage: { fetchedAt: string } }>(query);
    const second = await ttl.execute<{ statusPage: { fetchedAt: string } }>(query);
    expect(ttl.simulator.requestCount(pagePath('cached'))).toBe(1);
    expect(second.body.data?.statusPage.fetchedAt).toBe(first.body.data?.statusPage.fetchedAt);

    clock.advance(200);
    // Past the TTL the last snapshot answers at once while one refetch runs.
    const third = await ttl.executeAfterRefetch<{ statusPage: { fetchedAt: string } }>(query);
    expect(ttl.simulator.requestCount(pagePath('cached'))).toBe(2);
    expect(Date.parse(third.body.data?.statusPage.fetchedAt ?? '')).toBeGreaterThan(
      Date.parse(first.body.data?.statusPage.fetchedAt ?? ''),
    );
  });

  it('shows a change of the feed once the TTL has passed', async () => {
    const query = '{ statusPage(slug: "changing") { status { indicator } } }';
    const before = await rereads.execute<{ statusPage: { status: { indicator: string } } }>(query);
    rereads.simulator.updateStatusPage('changing', (feed) => {
      feed.summary.status.indicator = 'critical';
    });
    const after = await rereads.executeAfterRefetch<{
      statusPage: { status: { indicator: string } };
    }>(query);
    expect(before.body.data?.statusPage.status.indicator).not.toBe('CRITICAL');
    expect(after.body.data?.statusPage.status.indicator).toBe('CRITICAL');
  });
});
