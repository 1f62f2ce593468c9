import { afterEach, describe, expect, it } from 'vitest';
import type { Fault } from '../../../simulator/src/server.js';
import { testClock } from '../../helpers/clock.js';
import { type Harness, startHarness } from '../../helpers/harness.js';
import { listen } from '../../helpers/listen.js';

const SUMMARY = '/status/api/v2/summary.json';

interface FaultCase {
  name: string;
  fault: Fault;
  code: 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_BAD_RESPONSE';
  reason: RegExp;
}

const cases: FaultCase[] = [
  {
    name: 'a 503',
    fault: { kind: 'status', status: 503 },
    code: 'UPSTREAM_UNAVAILABLE',
    reason: /HTTP 503/,
  },
  {
    name: 'a 404',
    fault: { kind: 'status', status: 404 },
    code: 'UPSTREAM_UNAVAILABLE',
    reason: /HTTP 404/,
  },
  {
    name: 'an HTML page',
    fault: { kind: 'html' },
    code: 'UPSTREAM_BAD_RESPONSE',
    reason: /text\/html body that is not valid JSON/,
  },
  {
    name: 'truncated JSON',
    fault: { kind: 'truncated' },
    code: 'UPSTREAM_BAD_RESPONSE',
    reason: /not valid JSON/,
  },
  {
    name: 'an empty 200',
    fault: { kind: 'empty' },
    code: 'UPSTREAM_BAD_RESPONSE',
    reason: /body is empty/,
  },
  {
    name: 'a reset mid-body',
    fault: { kind: 'reset' },
    code: 'UPSTREAM_UNAVAILABLE',
    reason: /connection failed/,
  },
  {
    name: 'no answer in time',
    fault: { kind: 'hang' },
    code: 'UPSTREAM_UNAVAILABLE',
    reason: /no answer within 300 ms/,
  },
];

describe('status feed faults with no snapshot to fall back on', () => {
  let harness: Harness;
  afterEach(() => harness.close());

  for (const { name, fault, code, reason } of cases) {
    it(`answers ${name} with ${code}, naming the endpoint, and stays up`, async () => {
      harness = await startHarness({ env: { UPSTREAM_TIMEOUT_MS: 300 } });
      harness.simulator.setFault('status', '/summary.json', fault);

      const { status, body } = await harness.execute('{ statusPage { name } }');

      expect(status).toBe(200);
      expect(body.data).toBeNull();
      expect(body.errors).toHaveLength(1);
      const [error] = body.errors ?? [];
      expect(error?.extensions).toEqual({ code, upstream: 'status feed' });
      expect(error?.message).toContain('status feed GET /summary.json');
      expect(error?.message).toMatch(reason);
      expect(error?.path).toEqual(['statusPage']);
      expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|stack|at .*\.ts/);
      // An upstream failure is expected: a warning, not an error-level log line.
      expect(harness.logs.filter((line) => Number(line.level) >= 50)).toEqual([]);
      expect(harness.logs.some((line) => line.msg === 'upstream request failed')).toBe(true);

      harness.simulator.clearFaults();
      const healed = await harness.execute<{ statusPage: { name: string } }>(
        '{ statusPage { name } }',
      );
      expect(healed.body.errors).toBeUndefined();
      expect(healed.body.data?.statusPage.name).toBeTruthy();
    });
  }

  it('answers UPSTREAM_UNAVAILABLE when nothing listens at the feed address', async () => {
    // A loopback port that was just free, closed again: nothing listens there.
    const closed = await listen(() => {});
    await closed.close();
    harness = await startHarness({ env: { STATUS_BASE_URL: `${closed.origin}/status/api/v2` } });
    const { body } = await harness.execute('{ statusPage { name } }');
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(body.errors?.[0]?.message).toContain('the connection failed');
  });

  it('retries a GET after a 5xx and succeeds when the upstream recovers', async () => {
    harness = await startHarness({ env: { UPSTREAM_RETRIES: 2 } });
    harness.simulator.setFault(
      'status',
      '/summary.json',
      { kind: 'status', status: 502 },
      { times: 2 },
    );
    const { body } = await harness.execute<{ statusPage: { name: string } }>(
      '{ statusPage { name } }',
    );
    expect(body.errors).toBeUndefined();
    expect(harness.simulator.requestCount(SUMMARY)).toBe(3);
  });

  it('gives up after the retry limit', async () => {
    harness = await startHarness({ env: { UPSTREAM_RETRIES: 1 } });
    harness.simulator.setFault('status', '/summary.json', { kind: 'status', status: 500 });
    const { body } = await harness.execute('{ statusPage { name } }');
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(harness.simulator.requestCount(SUMMARY)).toBe(2);
  });

  it('does not retry a 4xx', async () => {
    harness = await startHarness({ env: { UPSTREAM_RETRIES: 2 } });
    harness.simulator.setFault('status', '/summary.json', { kind: 'status', status: 404 });
    await harness.execute('{ statusPage { name } }');
    expect(harness.simulator.requestCount(SUMMARY)).toBe(1);
  });

  it('fails only the fields that need the failing endpoint', async () => {
    harness = await startHarness();
    harness.simulator.setFault('status', '/scheduled-maintenances/upcoming.json', {
      kind: 'status',
      status: 503,
    });
    const summaryOnly = await harness.execute(
      '{ statusPage { name scheduledMaintenances { id } } }',
    );
    expect(summaryOnly.body.errors).toBeUndefined();

    const { body } = await harness.execute<{ statusPage: { name: string } }>(
      '{ statusPage { name upcomingMaintenances { id } } }',
    );
    expect(body.errors?.[0]?.path).toEqual(['statusPage', 'upcomingMaintenances']);
    expect(body.errors?.[0]?.message).toContain('GET /scheduled-maintenances/upcoming.json');
    // The rest of the page still answers: one document failing never removes another's data.
    expect(body.data?.statusPage).toEqual({
      name: harness.simulator.statusFeed.summary.page.name,
      upcomingMaintenances: null,
    });
  });
});

describe('stale-if-error', () => {
  let harness: Harness;
  afterEach(() => harness.close());

  it('serves the last good snapshot while the feed fails, with its fetch time', async () => {
    harness = await startHarness({ env: { STATUS_CACHE_TTL_MS: 0, STATUS_MAX_STALE_MS: 60_000 } });
    const good = await harness.execute<{ statusPage: { name: string; fetchedAt: string } }>(
      '{ statusPage { name fetchedAt } }',
    );
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });

    const stale = await harness.execute<{ statusPage: { name: string; fetchedAt: string } }>(
      '{ statusPage { name fetchedAt } }',
    );
    expect(stale.body.errors).toBeUndefined();
    expect(stale.body.data).toEqual(good.body.data);
    // More reads during the same outage: still one warning, not one per read.
    await harness.executeAfterRefetch('{ statusPage { name } }');
    await harness.executeAfterRefetch('{ statusPage { name } }');
    const warnings = () =>
      harness.logs.filter(
        (line) => line.msg === 'status feed failed; serving the last good snapshot',
      );
    expect(warnings()).toHaveLength(1);
    harness.simulator.clearFaults();
    await harness.executeAfterRefetch('{ statusPage { name } }');
    expect(harness.logs.filter((line) => line.msg === 'status feed answers again')).toHaveLength(1);
  });

  it('stops serving a snapshot older than STATUS_MAX_STALE_MS', async () => {
    const clock = testClock();
    harness = await startHarness({ env: { STATUS_CACHE_TTL_MS: 0, STATUS_MAX_STALE_MS: 50 } });
    await harness.execute('{ statusPage { name } }');
    harness.simulator.setFault('status', '*', { kind: 'html' });
    clock.advance(51);
    const { body } = await harness.execute('{ statusPage { name } }');
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
  });
});
