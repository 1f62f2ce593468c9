import type { Logger } from 'pino';
import type { Chain } from './model.js';

/*
 * The chain ids the configuration maps to status pages, checked against the verification
 * service's own list when it is fetched: a chain the list lacks (or lists as unsupported) drops
 * out of a page's `chains` and `supportedChains`, so the operator is told where it is configured,
 * once, instead of nothing at all.
 */

/** A chain id as configured, and where. */
export interface ConfiguredChain {
  readonly chainId: string;
  /** Where it is configured, e.g. `STATUS_PAGES_FILE pages[2].chains[0].chainId (page ledger)`. */
  readonly where: string;
}

/** The chain ids of `pages` (in configuration order, as STATUS_PAGES_FILE lists them), with their paths. */
export function configuredChainsOf(
  pages: readonly { readonly slug: string; readonly chains: readonly { chainId: string }[] }[],
): ConfiguredChain[] {
  return pages.flatMap(({ slug, chains }, i) =>
    chains.map(({ chainId }, j) => ({
      chainId,
      where: `STATUS_PAGES_FILE pages[${i}].chains[${j}].chainId (page ${slug})`,
    })),
  );
}

/**
 * A check of the configured chains against a chain list, logging each one the list does not
 * support once for as long as it stays configured so (a reload that fixes it and breaks it again
 * is told again). What it remembers is what is wrong now: bounded by the configuration.
 */
export function createConfiguredChainsCheck(
  configured: () => Iterable<ConfiguredChain>,
  logger: Pick<Logger, 'warn'>,
) {
  let told = new Set<string>();
  return (chains: readonly Chain[]): void => {
    const byId = new Map(chains.map((chain) => [chain.id, chain]));
    const wrong = new Set<string>();
    for (const { chainId, where } of configured()) {
      const chain = byId.get(chainId);
      if (chain?.supported) continue;
      const key = `${where}\n${chainId}`;
      wrong.add(key);
      if (told.has(key)) continue;
      logger.warn(
        { chainId, configured: where, upstream: 'verification service' },
        chain
          ? `${where}: chain ${chainId} (${chain.name}) is listed by the verification service as unsupported (GET /chains): the page's chains and supportedChains leave it out`
          : `${where}: chain ${chainId} is not in the verification service's chain list (GET /chains): the page's chains and supportedChains leave it out; check the chain id`,
      );
    }
    told = wrong;
  };
}
