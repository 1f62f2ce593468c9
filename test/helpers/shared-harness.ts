import type { SimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { eventually } from './eventually.js';
import { type Harness, type HarnessOptions, startHarness } from './harness.js';

/**
 * The harnesses of one test file, one per configuration: `use(options)` starts the gateway and
 * its simulator the first time a configuration is asked for, and hands back the same ones after,
 * the simulator's faults cleared, its verification service put back as it started and its request
 * counts reset. The status feed is not put back (a new feed is a change the gateway would see):
 * a test that edits it, or that needs a gateway that has read nothing yet, starts its own.
 */
export function sharedHarnesses() {
  const started = new Map<string, Promise<Harness>>();
  const all = new Set<Harness>();
  return {
    async use(
      options: Omit<HarnessOptions, 'env'> & {
        env?: Exclude<HarnessOptions['env'], (...args: never) => unknown>;
      } = {},
    ): Promise<Harness> {
      const key = JSON.stringify(options);
      let starting = started.get(key);
      if (!starting) {
        starting = startHarness(options);
        started.set(key, starting);
      }
      const harness = await starting;
      all.add(harness);
      harness.simulator.clearFaults();
      harness.simulator.verification.reset();
      harness.simulator.resetRequests();
      return harness;
    },
    /** Whether `harness` is one of these, which `close` ends, not the test that used it. */
    has: (harness: Harness | undefined) => harness !== undefined && all.has(harness),
    async close() {
      const harnesses = await Promise.all(started.values());
      started.clear();
      all.clear();
      await Promise.all(harnesses.map((harness) => harness.close()));
    },
  };
}

let edits = 0;
/**
 * Edits the default page's feed and resolves once the gateway serves the edit, for a gateway that
 * has read the feed before (one that re-reads it on every read: `STATUS_CACHE_TTL_MS: 0`): the
 * page's `updatedAt`, set to a time of the edit's own, shows that it read it.
 */
export async function editServed(
  harness: Harness,
  edit: (feed: SimulatedFeed) => void,
): Promise<void> {
  edits += 1;
  const marker = Date.UTC(2000, 0, 1, 0, 0, edits);
  harness.simulator.updateStatusFeed((feed) => {
    edit(feed);
    feed.summary.page.updated_at = new Date(marker).toISOString();
  });
  await eventually(async () => {
    const { body } = await harness.execute<{ statusPage: { updatedAt: string } }>(
      '{ statusPage { updatedAt } }',
    );
    return Date.parse(body.data?.statusPage.updatedAt ?? '') === marker;
  });
}
