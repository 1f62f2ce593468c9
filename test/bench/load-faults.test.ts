import { describe, expect, it } from 'vitest';
import { type LoadSummary, loadFaults } from '../../bench/lib/load.js';

/*
 * The bench smoke (`npm run bench -- --smoke`, the last step of `npm test`) fails on a load whose
 * figures are wrong to report: it passed while a contender answered 0 req/s.
 */

const load = (counts: Partial<LoadSummary>): LoadSummary => ({
  durationSeconds: 1,
  connections: 50,
  requests: 1_000,
  requestsPerSecond: 1_000,
  latencyMs: { p50: 1, p90: 2, p99: 3, max: 4, mean: 1 },
  ok: 1_000,
  non2xx: 0,
  statusCodes: { 200: 1_000 },
  graphqlErrorResponses: 0,
  graphqlErrorResponsesWithData: 0,
  errorsByCode: {},
  unparseable: 0,
  connectionErrors: 0,
  timeouts: 0,
  byKind: {},
  errors: 0,
  ...counts,
});

describe('a load the bench reports', () => {
  it('is fine when every answer was good', () => {
    expect(loadFaults(load({}))).toEqual([]);
  });

  it('is wrong when the contender answered nothing, errors counted as data or not', () => {
    const nothing = load({ requests: 0, requestsPerSecond: 0, ok: 0, statusCodes: {} });
    expect(loadFaults(nothing)).toEqual(['answered nothing (0 good answers of 0 requests)']);
    expect(loadFaults(nothing, { errorsAreData: true })).toHaveLength(1);
    const refused = load({ ok: 0, non2xx: 1_000, statusCodes: { 503: 1_000 }, errors: 1_000 });
    expect(loadFaults(refused, { errorsAreData: true })).toEqual([
      'answered nothing (0 good answers of 1000 requests)',
    ]);
  });

  it('is wrong with any error, unless its errors are data', () => {
    const some = load({
      ok: 990,
      statusCodes: { 200: 995, 502: 5 },
      non2xx: 5,
      graphqlErrorResponses: 5,
      errorsByCode: { UPSTREAM_UNAVAILABLE: 5 },
      timeouts: 0,
      errors: 10,
    });
    expect(loadFaults(some)).toEqual([
      '10 errors (status 200: 995, 502: 5; codes UPSTREAM_UNAVAILABLE: 5; 0 connection errors, 0 timeouts, 0 unparseable)',
    ]);
    expect(loadFaults(some, { errorsAreData: true })).toEqual([]);
  });
});
