import type { Simulator } from '../../simulator/src/server.js';
import type { SimulatedPage } from '../../simulator/src/status-feed/status-pages.js';
import type { ConfigVariableName } from '../../src/config.js';
import { DEFAULT_PAGE_SLUG } from '../../src/core/status/model.js';
import { statusPagesFile } from './status-pages-file.js';

type GatewayEnv = Partial<Record<ConfigVariableName, string | number | boolean>>;

/**
 * A harness's `env` for a gateway that serves, beside the simulator's default page (first, so
 * still the one `statusPage` reads without a slug), one page of each test's own: `pages`, each
 * served by the simulator at `statusPageUrl(slug)`, listed in a `STATUS_PAGES_FILE`. A page of its
 * own is one the gateway has read nothing of until its test asks: its own upstream paths, counts,
 * faults and (with `REDIS_URL`) keys, whatever the file's other tests did first.
 */
export function withOwnPages(
  pages: Readonly<Record<string, SimulatedPage>>,
  env: GatewayEnv = {},
): (simulator: Simulator) => GatewayEnv {
  return (simulator) => {
    for (const [slug, page] of Object.entries(pages)) simulator.setStatusPage(slug, page);
    return {
      ...env,
      STATUS_PAGES_FILE: statusPagesFile([
        { slug: DEFAULT_PAGE_SLUG, baseUrl: simulator.statusBaseUrl },
        ...Object.keys(pages).map((slug) => ({ slug, baseUrl: simulator.statusPageUrl(slug) })),
      ]),
    };
  };
}

/** The upstream path of `document` (`/summary.json`) of page `slug`, as the simulator counts it. */
export const pagePath = (slug: string, document: string) => `/status/${slug}/api/v2${document}`;
