import type { Logger } from 'pino';
import type { Config, StatusPageConfig } from '../../config.js';
import { DEFAULT_PAGE_SLUG } from '../../core/status/model.js';
import { InvalidInputError } from '../../errors/invalid-input-error.js';
import type { SnapshotCacheEvent } from '../snapshot-cache.js';
import type { UpstreamObserver } from '../upstream-client.js';
import { FeedPoller } from './feed-poller.js';
import {
  createStatusFeed,
  type FeedDocument,
  type StatusFeed,
  type StatusFeedOptions,
} from './status-feed.js';

/**
 * Pages whose metric series carry their own slug, in configuration order; the pages after them
 * share the label `other`, so that a file of a thousand pages cannot make a thousand series.
 */
export const MAX_PAGE_LABELS = 20;

/** One configured page, once asked for: its feed (caches, upstream client) and its poller. */
export interface StatusPage {
  readonly config: StatusPageConfig;
  readonly feed: StatusFeed;
  readonly poller: FeedPoller;
}

export interface StatusPagesOptions {
  readonly config: Config['statusFeed'];
  /** What every page's feed shares: its caches' policy, Redis, the change bus, tracing. */
  readonly feed: Omit<StatusFeedOptions, 'page' | 'upstreamName' | 'observer' | 'onCacheEvent'>;
  readonly observer?: UpstreamObserver;
  /** Told of every cache read, by the page's metric label and the document's path. */
  readonly onCacheEvent?: (endpoint: string, event: SnapshotCacheEvent) => void;
  readonly logger: Logger;
}

/**
 * The configured status pages, by slug. A page costs nothing until it is asked for: its feed and
 * poller are made on first use, its documents fetched when read, and polled only while a
 * subscription needs them. Each page has caches, an upstream client (and circuit), Redis keys
 * and change events of its own.
 */
export class StatusPages {
  readonly #options: StatusPagesOptions;
  readonly #configs: ReadonlyMap<string, StatusPageConfig>;
  readonly #pages = new Map<string, StatusPage>();
  /** Each configured chain's page (its slug) and components (their ids), by chain id. */
  readonly #chains = new Map<string, { slug: string; components: readonly string[] }>();
  /** Every configured page, in configuration order. */
  readonly configs: readonly StatusPageConfig[];
  /** The first configured page: what `statusPage` without a slug answers. */
  readonly defaultSlug: string;

  constructor(options: StatusPagesOptions) {
    this.#options = options;
    this.configs = options.config.pages;
    this.#configs = new Map(this.configs.map((config) => [config.slug, config]));
    for (const { slug, chains } of this.configs) {
      for (const { chainId, components } of chains) this.#chains.set(chainId, { slug, components });
    }
    const first = this.configs[0];
    if (!first) throw new RangeError('at least one status page is configured');
    this.defaultSlug = first.slug;
  }

  has(slug: string): boolean {
    return this.#configs.has(slug);
  }

  /** The configuration of page `slug`; `BAD_USER_INPUT` for a slug nobody configured. */
  config(slug: string): StatusPageConfig {
    const config = this.#configs.get(slug);
    if (config) return config;
    throw new InvalidInputError(
      'slug',
      `No status page has the slug ${JSON.stringify(slug.slice(0, 64))}: ask statusPages for the configured ones.`,
    );
  }

  /** The page that stands for chain `chainId`, and the components that do, if one is configured. */
  chain(chainId: string) {
    return this.#chains.get(chainId);
  }

  /** Page `slug`, made on first use; `BAD_USER_INPUT` for a slug nobody configured. */
  get(slug: string): StatusPage {
    const existing = this.#pages.get(slug);
    if (existing) return existing;
    const page = this.#create(this.config(slug));
    this.#pages.set(slug, page);
    return page;
  }

  /**
   * A check that every one of `snapshots` is still what its page serves (see
   * `StatusFeed.currencyOf`): each snapshot names its page, so this asks that page alone.
   */
  currencyOf = (snapshots: readonly object[]): ((now: number) => boolean) | undefined => {
    const checks: ((now: number) => boolean)[] = [];
    for (const snapshot of snapshots) {
      const slug = (snapshot as { value?: { page?: { slug?: unknown } } }).value?.page?.slug;
      const page = typeof slug === 'string' ? this.#pages.get(slug) : undefined;
      const check = page?.feed.currencyOf(snapshot);
      if (!check) return undefined;
      checks.push(check);
    }
    // An answer that read no snapshot has nothing that says when it is out of date.
    if (checks.length === 0) return undefined;
    if (checks.length === 1) return checks[0];
    return (now) => checks.every((check) => check(now));
  };

  /**
   * Polls `documents` of each of `slugs` until the returned release is called (see
   * `FeedPoller.acquire`).
   */
  acquire(slugs: readonly string[], documents: readonly FeedDocument[]): () => void {
    const releases = slugs.map((slug) => this.get(slug).poller.acquire(documents));
    return () => {
      for (const release of releases) release();
    };
  }

  /**
   * Runs `task` for each of `slugs`, at most `perHost` at once against any one host: a query over
   * a hundred pages of one provider does not open a hundred requests to it together.
   */
  async forEachByHost(
    slugs: readonly string[],
    perHost: number,
    task: (slug: string) => Promise<unknown>,
  ): Promise<void> {
    const byHost = new Map<string, string[]>();
    for (const slug of slugs) {
      const host = new URL(this.config(slug).baseUrl).host;
      const queued = byHost.get(host);
      if (queued) queued.push(slug);
      else byHost.set(host, [slug]);
    }
    const worker = async (queue: string[]) => {
      for (let slug = queue.shift(); slug !== undefined; slug = queue.shift()) {
        await task(slug).catch(() => {});
      }
    };
    await Promise.all(
      [...byHost.values()].flatMap((queue) =>
        Array.from({ length: Math.min(perHost, queue.length) }, () => worker(queue)),
      ),
    );
  }

  /** Stops every page's poller. */
  close(): void {
    for (const page of this.#pages.values()) page.poller.close();
  }

  #create(config: StatusPageConfig): StatusPage {
    const options = this.#options;
    const isDefault = config.slug === DEFAULT_PAGE_SLUG;
    // The default page keeps the names of a gateway that served one page: its metrics, logs and
    // errors read as they did.
    const label = this.configs.indexOf(config) < MAX_PAGE_LABELS ? config.slug : 'other';
    const metricName = isDefault ? 'status feed' : `status feed ${label}`;
    const { observer, onCacheEvent } = options;
    const feed = createStatusFeed({
      ...options.feed,
      page: config,
      upstreamName: isDefault ? 'status feed' : `status feed of page ${config.slug}`,
      observer: observer && {
        request: (endpoint, outcome, seconds) =>
          observer.request({ ...endpoint, upstream: metricName }, outcome, seconds),
        circuit: (_upstream, state) => observer.circuit(metricName, state),
      },
      onCacheEvent:
        onCacheEvent &&
        ((path, event) => onCacheEvent(isDefault ? path : `${label}${path}`, event)),
    });
    const poller = new FeedPoller({
      feed,
      intervalMs: options.config.pollIntervalMs,
      ttlMs: options.config.cacheTtlMs,
      logger: options.logger,
    });
    return { config, feed, poller };
  }
}
