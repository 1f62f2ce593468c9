import { afterEach, describe, expect, it } from 'vitest';
import { testClock } from '../helpers/clock.js';
import { type Harness, startHarness } from '../helpers/harness.js';

const SUMMARY = '/status/api/v2/summary.json';

describe('a feed that hangs', () => {
  let harness: Harness;
  afterEach(() => harness.close());

  it('never holds a reader while a usable snapshot exists', async () => {
    // An upstream timeout far beyond the test's: a reader that waited for the feed would fail it.
    const clock = testClock();
    harness = await startHarness({
      env: { STATUS_CACHE_TTL_MS: 50, UPSTREAM_TIMEOUT_MS: 120_000, UPSTREAM_RETRIES: 0 },
    });
    const good = await harness.execute<{ statusPage: { name: string } }>('{ statusPage { name } }');
    harness.simulator.setFault('status', '*', { kind: 'hang' });
    clock.advance(50);
    for (let i = 0; i < 20; i += 1) {
      const { body } = await harness.execute<{ statusPage: { name: string } }>(
        '{ statusPage { name } }',
      );
      expect(body.data).toEqual(good.body.data);
    }
    // One refetch hangs upstream; the twenty reads did not each start another.
    expect(harness.simulator.requestCount(SUMMARY)).toBe(2);
  });
});
