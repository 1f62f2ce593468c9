import { eventually } from './eventually.js';
import type { Harness } from './harness.js';

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
