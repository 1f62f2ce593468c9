import { writeFileSync } from 'node:fs';
import type { Fault } from '../../simulator/src/fault.js';
import type { Simulator } from '../../simulator/src/server.js';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { STATUSPAGE_V2 } from '../../src/providers/statuspage-v2/documents.js';
import type { Harness, HarnessOptions } from './harness.js';
import { statusPagesFile } from './status-pages-file.js';

type GatewayEnv = Exclude<HarnessOptions['env'], ((...args: never) => unknown) | undefined>;

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

/**
 * A gateway of one page, `default` (what `/readiness` reports of the feed), that each test points
 * at a page of its own no one has read: `options` for the harness, whose STATUS_PAGES_FILE `fresh`
 * writes again and has the gateway read (as on SIGHUP), so that the test starts with a feed that
 * has no snapshot, and a circuit, of its own.
 */
export function freshDefaultPage(options: Omit<HarnessOptions, 'env'> & { env?: GatewayEnv } = {}) {
  let file: string | undefined;
  let made = 0;
  const write = (baseUrl: string) => {
    const pages = [{ slug: 'default', baseUrl }];
    if (file === undefined) file = statusPagesFile(pages);
    else writeFileSync(file, JSON.stringify({ pages }));
    return file;
  };
  return {
    options: {
      ...options,
      env: (simulator: Simulator) => ({
        ...options.env,
        STATUS_PAGES_FILE: write(simulator.statusBaseUrl),
      }),
    } satisfies HarnessOptions,
    /** Points page `default` at a new simulated feed; true once the gateway serves it. */
    fresh(harness: Harness): boolean {
      made += 1;
      const slug = `fresh-${made}`;
      harness.simulator.setStatusPage(slug, createSimulatedFeed());
      write(harness.simulator.statusPageUrl(slug));
      return harness.gateway.reloadStatusPages();
    },
  };
}
