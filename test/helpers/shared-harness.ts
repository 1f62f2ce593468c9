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
