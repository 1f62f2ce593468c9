import type { Fault } from '../../simulator/src/fault.js';
import type { Simulator } from '../../simulator/src/server.js';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { STATUSPAGE_V2 } from '../../src/providers/statuspage-v2/documents.js';
import type { HarnessOptions } from './harness.js';
import { statusPagesFile } from './status-pages-file.js';

/**
 * A harness whose gateway serves, beside its default page (the simulator's feed at
 * `statusBaseUrl`, slug `default`), a page of its own for each of `slugs`, each a fresh simulated
 * feed: the tests of one shared gateway each read pages no other test has read, so that each sees
 * its first fetch, its own snapshots, answers and circuit, whatever ran before it.
 */
export function withOwnPages(
  slugs: readonly string[],
  options: HarnessOptions = {},
): HarnessOptions {
  const { env } = options;
  return {
    ...options,
    simulator: {
      ...options.simulator,
      statusPages: Object.fromEntries(slugs.map((slug) => [slug, createSimulatedFeed()])),
    },
    env: (simulator) => ({
      ...(typeof env === 'function' ? env(simulator) : env),
      STATUS_PAGES_FILE: statusPagesFile([
        { slug: 'default', baseUrl: simulator.statusBaseUrl },
        ...slugs.map((slug) => ({ slug, baseUrl: simulator.statusPageUrl(slug) })),
      ]),
    }),
  };
}

/** The path the simulator counts page `slug`'s summary under (`requestCount`). */
export const summaryOf = (slug: string) => `/status/${slug}/api/v2/summary.json`;

/**
 * Puts `fault` on every document of page `slug` alone: what `setFault('status', '*', fault)` is to
 * a gateway of one page.
 */
export function faultPage(simulator: Simulator, slug: string, fault: Fault | null): void {
  for (const { path } of Object.values(STATUSPAGE_V2.documents)) {
    simulator.setFault('status', `/${slug}/api/v2${path}`, fault);
  }
}
