import type { Logger } from 'pino';
import type { StatusPageConfig } from '../../config.js';
import type { StatusSummary } from '../../core/status/model.js';

/**
 * A check of a page's configured chains against its summary, called with each summary fetched: a
 * component id the page does not list drops out of its chain's `status`, `components` and
 * `softwareVersion` (with an error beside them, `CONFIGURATION_MISMATCH`), so the operator is
 * told where it is configured, once for as long as the page lacks it, instead of nothing at all.
 * What it remembers is bounded by the page's configuration.
 */
export function createConfiguredComponentsCheck(
  page: Pick<StatusPageConfig, 'slug'> & Partial<Pick<StatusPageConfig, 'chains'>>,
  logger: Pick<Logger, 'warn'>,
  upstream: string,
) {
  let told = new Set<string>();
  return (summary: StatusSummary): void => {
    const { chains = [] } = page;
    if (chains.length === 0) return;
    const missingNow = new Set<string>();
    chains.forEach(({ chainId, components }, j) => {
      const missing = components.filter((id) => !summary.componentsById.has(id));
      if (missing.length === 0) return;
      const configured = `STATUS_PAGES_FILE page ${page.slug} chains[${j}].components`;
      const key = `${configured}\n${missing.join(',')}`;
      missingNow.add(key);
      if (told.has(key)) return;
      logger.warn(
        { upstream, chainId, missing, configured },
        `${configured}: the status page lists no component ${missing.join(', ')}: chain ${chainId}'s status leaves ${missing.length === 1 ? 'it' : 'them'} out; check the component ids`,
      );
    });
    told = missingNow;
  };
}
