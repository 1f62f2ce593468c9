import { writeFileSync } from 'node:fs';
import type { Fault } from '../../simulator/src/fault.js';
import type { Simulator } from '../../simulator/src/server.js';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import type { SimulatedPage } from '../../simulator/src/status-feed/status-pages.js';
import { DEFAULT_PAGE_SLUG } from '../../src/core/status/model.js';
import { STATUSPAGE_V2 } from '../../src/providers/statuspage-v2/documents.js';
import { eventually } from './eventually.js';
import type { Harness, HarnessOptions } from './harness.js';
import { statusPagesFile } from './status-pages-file.js';

type GatewayEnv = Exclude<HarnessOptions['env'], ((...args: never) => unknown) | undefined>;

/**
 * A harness whose gateway serves, beside the simulator's default page (first, so still the one
 * `statusPage` reads without a slug), a page of each test's own, listed in a `STATUS_PAGES_FILE`:
 * `pages`, slugs each served a fresh demo feed, or each slug's feed. A page of its own is one the
 * gateway has read nothing of until its test asks: its own first fetch, snapshots, answers,
 * circuit, upstream paths, counts, faults and (with `REDIS_URL`) keys, whatever the file's other
 * tests did first. For the tests of one file that share a gateway.
 */
export function withOwnPages(
  pages: readonly string[] | Readonly<Record<string, SimulatedPage>>,
  options: HarnessOptions = {},
): HarnessOptions {
  const { env } = options;
  const feeds: Readonly<Record<string, SimulatedPage>> = isSlugs(pages)
    ? Object.fromEntries(pages.map((slug) => [slug, createSimulatedFeed()]))
    : pages;
  return {
    ...options,
    env: (simulator) => {
      for (const [slug, page] of Object.entries(feeds)) simulator.setStatusPage(slug, page);
      return {
        ...(typeof env === 'function' ? env(simulator) : env),
        STATUS_PAGES_FILE: statusPagesFile([
          { slug: DEFAULT_PAGE_SLUG, baseUrl: simulator.statusBaseUrl },
          ...Object.keys(feeds).map((slug) => ({ slug, baseUrl: simulator.statusPageUrl(slug) })),
        ]),
      };
    },
  };
}

const isSlugs = (
  pages: readonly string[] | Readonly<Record<string, SimulatedPage>>,
): pages is readonly string[] => Array.isArray(pages);

/** The upstream path of `document` of page `slug`, as the simulator counts it (`requestCount`). */
export const pagePath = (slug: string, document = '/summary.json') =>
  `/status/${slug}/api/v2${document}`;

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
    const pages = [{ slug: DEFAULT_PAGE_SLUG, baseUrl }];
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

/**
 * Waits until the gateway of `harness` holds no status page (let go once `STATUS_PAGE_IDLE_MS` is
 * over, on a clock moved past it) and none of its requests to a feed is in flight (a refetch that
 * a read of the test before started), then resets the simulator's request counts: a page read
 * next is read as by a gateway that has read nothing yet (no snapshot to stand in, no conditional
 * request), and its requests are counted alone.
 */
export async function untilPagesLetGo(harness: Harness): Promise<void> {
  await eventually(
    async () =>
      harness.simulator.concurrency('/status/').current === 0 &&
      (await harness.metric('status_pages_resident')) === 0,
  );
  harness.simulator.resetRequests();
}
