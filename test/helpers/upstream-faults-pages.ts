import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { eventually } from './eventually.js';
import type { Harness, HarnessOptions } from './harness.js';
import { statusPagesFile } from './status-pages-file.js';

type Env = Exclude<HarnessOptions['env'], ((...args: never) => unknown) | undefined>;

/**
 * A gateway with `env` whose default page is the simulator's feed, as with `STATUS_BASE_URL`, and
 * beside it a page of the demo feed for each of `slugs`, at its simulator page: pages that tests
 * sharing the gateway read alone, each as a gateway that has read nothing yet reads it.
 */
export function withOwnPages(slugs: readonly string[], env: Env = {}): HarnessOptions {
  return {
    simulator: {
      statusPages: Object.fromEntries(slugs.map((slug) => [slug, createSimulatedFeed()])),
    },
    env: (simulator) => ({
      ...env,
      STATUS_PAGES_FILE: statusPagesFile([
        { slug: 'default', baseUrl: simulator.statusBaseUrl },
        ...slugs.map((slug) => ({ slug, baseUrl: simulator.statusPageUrl(slug) })),
      ]),
    }),
  };
}

/**
 * Waits until the gateway of `harness` holds no status page (let go once `STATUS_PAGE_IDLE_MS` is
 * over, on a clock moved past it) and none of its requests to a feed is in flight (a refetch that
 * a read of the test before started), then resets the simulator's request counts: a page read
 * next is read as by a gateway that has read nothing yet (no snapshot to stand in, no conditional
 * request), and its requests are counted alone. For tests that share a gateway.
 */
export async function untilPagesLetGo(harness: Harness): Promise<void> {
  await eventually(
    async () =>
      harness.simulator.concurrency('/status/').current === 0 &&
      (await harness.metric('status_pages_resident')) === 0,
  );
  harness.simulator.resetRequests();
}
