import type { Logger } from 'pino';
import type { Config, StatusPageConfig } from '../../config.js';
import { DEFAULT_PAGE_SLUG } from '../../core/status/model.js';
import { InvalidInputError } from '../../errors/invalid-input-error.js';
import { tooManySubscriptions } from '../../errors/subscription-error.js';
import type { CircuitBreaker, CircuitState } from '../circuit-breaker.js';
import { RequestSlots } from '../request-slots.js';
import type { SnapshotCacheEvent } from '../snapshot-cache.js';
import { type UpstreamObserver, upstreamCircuit } from '../upstream-client.js';
import { FeedPoller } from './feed-poller.js';
import { type ReleaseReason, ResidentPages } from './resident-pages.js';
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

/** What the pages past `MAX_PAGE_LABELS` are called in metrics. */
export const OTHER_PAGES_UPSTREAM = 'status feed other';

/**
 * The share of `STATUS_PAGES_MAX_BYTES` one document's snapshot may hold: a page of four such
 * documents is a quarter of the budget, so that no one page (however its feed grows) takes it all
 * and others are always resident beside it. Under the Dockerfile's flags that is 3.5 MiB, a body
 * of about 2.3 MiB; the real pages' largest document (Twilio's incidents, 241 KB) holds 320 KB.
 */
const DOCUMENT_BUDGET_SHARE = 1 / 16;

/** What the status pages tell the metrics, besides each page's upstream requests and circuit. */
export interface StatusPagesObserver extends UpstreamObserver {
  /** How many circuits of the pages past `MAX_PAGE_LABELS` are not closed (open or half-open). */
  circuitsOpen(upstream: string, count: number): void;
  /** The pages held in memory now, and their bytes as estimated. */
  residentPages(pages: number, bytes: number): void;
  /** A page was let go, and why. */
  pageReleased(reason: ReleaseReason): void;
}

/** One configured page, once asked for: its feed (caches, upstream client) and its poller. */
export interface StatusPage {
  readonly config: StatusPageConfig;
  readonly feed: StatusFeed;
  readonly poller: FeedPoller;
}

export interface StatusPagesOptions {
  readonly config: Config['statusFeed'];
  /** What every page's feed shares: its caches' policy, Redis, the change bus, tracing. */
  readonly feed: Omit<
    StatusFeedOptions,
    | 'page'
    | 'upstreamName'
    | 'observer'
    | 'onCacheEvent'
    | 'maxDocumentBytes'
    | 'onResize'
    | 'client'
  >;
  readonly observer?: StatusPagesObserver;
  /** Told of every cache read, by the page's metric label and the document's path. */
  readonly onCacheEvent?: (endpoint: string, event: SnapshotCacheEvent) => void;
  readonly logger: Logger;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * The configured status pages, by slug. A page costs nothing until it is asked for: its feed and
 * poller are made on first use, its documents fetched when read, and polled only while a
 * subscription needs them. Each page has caches, an upstream client, Redis keys and change events
 * of its own; what they hold is kept within `STATUS_PAGES_MAX_BYTES` (`ResidentPages`): a page no
 * subscription follows is let go when the others need the room or it was not asked for within
 * `STATUS_PAGE_IDLE_MS`, and made again when next asked for. What must outlive that is kept per
 * configured page, bounded by the configuration: its circuit (an evicted dead page still fails
 * fast). The pages of one host share its request slots (`STATUS_FETCHES_PER_HOST`).
 */
export class StatusPages {
  readonly #options: StatusPagesOptions;
  readonly #configs: ReadonlyMap<string, StatusPageConfig>;
  readonly #resident: ResidentPages<StatusPage>;
  /** Each page's circuit, made when the page is first asked for and kept while it is let go. */
  readonly #circuits = new Map<string, CircuitBreaker>();
  /** The pages past `MAX_PAGE_LABELS` whose circuit is not closed. */
  readonly #openOthers = new Set<string>();
  /** Request slots by host (`host:port`), shared by the pages of each. */
  readonly #hostSlots = new Map<string, RequestSlots>();
  readonly #idleTimer: NodeJS.Timeout;
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
    const { observer, logger, config } = options;
    this.#resident = new ResidentPages({
      maxBytes: config.maxBytes,
      idleMs: config.idleMs,
      now: options.now,
      release: (slug, page, reason) => {
        page.poller.close();
        page.feed.close();
        observer?.pageReleased(reason);
        if (reason === 'budget') {
          logger.debug(
            {
              slug,
              bytes: page.feed.bytes,
              residentBytes: this.#resident.bytes,
              maxBytes: config.maxBytes,
            },
            'status page let go to stay within STATUS_PAGES_MAX_BYTES',
          );
        }
      },
      onChange: (pages, bytes) => observer?.residentPages(pages, bytes),
    });
    if (this.configs.length > MAX_PAGE_LABELS) observer?.circuitsOpen(OTHER_PAGES_UPSTREAM, 0);
    // Idle pages go within half the idle time after it is over.
    this.#idleTimer = setInterval(
      () => this.#resident.releaseIdle(),
      Math.max(config.idleMs / 2, 10),
    );
    this.#idleTimer.unref();
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

  /**
   * Page `slug`, made when it is not resident; `BAD_USER_INPUT` for a slug nobody configured. What
   * holds the page (a request's loaders) can read it to the end, even once it has been let go.
   */
  get(slug: string): StatusPage {
    const resident = this.#resident.get(slug);
    if (resident) return resident;
    const page = this.#create(this.config(slug));
    this.#resident.add(slug, page, page.feed.bytes);
    return page;
  }

  /** The pages held in memory now, and their bytes as estimated. */
  get resident(): { readonly pages: number; readonly bytes: number } {
    return { pages: this.#resident.size, bytes: this.#resident.bytes };
  }

  /**
   * A check that every one of `snapshots` is still what its page serves (see
   * `StatusFeed.currencyOf`): each snapshot names its page, so this asks that page alone.
   */
  currencyOf = (snapshots: readonly object[]): ((now: number) => boolean) | undefined => {
    const checks: ((now: number) => boolean)[] = [];
    for (const snapshot of snapshots) {
      const slug = (snapshot as { value?: { page?: { slug?: unknown } } }).value?.page?.slug;
      const page = typeof slug === 'string' ? this.#resident.peek(slug) : undefined;
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
   * Polls `documents` of each of `slugs`, and keeps those pages resident, until the returned
   * release is called (see `FeedPoller.acquire`). While the pages followed already hold
   * `STATUS_PAGES_MAX_BYTES`, following another is refused with `TOO_MANY_SUBSCRIPTIONS`, before
   * anything is done: change detection needs a followed page's snapshots, so it cannot be let go.
   */
  acquire(slugs: readonly string[], documents: readonly FeedDocument[]): () => void {
    const unique = [...new Set(slugs)];
    const { maxBytes } = this.#options.config;
    if (
      this.#resident.followedBytes >= maxBytes &&
      unique.some((slug) => !this.#resident.isFollowed(slug))
    ) {
      this.#options.logger.info(
        { followedBytes: this.#resident.followedBytes, maxBytes },
        'subscription refused: the followed status pages hold STATUS_PAGES_MAX_BYTES',
      );
      throw tooManySubscriptions('STATUS_PAGES_MAX_BYTES', maxBytes);
    }
    const releases = unique.map((slug) => {
      // Not through `get`: a page made now could be let go, over the budget, before it is followed.
      const page = this.#resident.get(slug) ?? this.#create(this.config(slug));
      this.#resident.follow(slug, page, page.feed.bytes);
      const stop = page.poller.acquire(documents);
      return () => {
        stop();
        this.#resident.unfollow(slug, page);
      };
    });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const release of releases) release();
    };
  }

  /** Stops every page's poller, and the release of idle pages. */
  close(): void {
    clearInterval(this.#idleTimer);
    for (const page of this.#resident.pages()) page.poller.close();
  }

  #create(config: StatusPageConfig): StatusPage {
    const options = this.#options;
    const { slug } = config;
    const isDefault = slug === DEFAULT_PAGE_SLUG;
    // The default page keeps the names of a gateway that served one page: its metrics, logs and
    // errors read as they did.
    const labelled = this.configs.indexOf(config) < MAX_PAGE_LABELS;
    const label = labelled ? slug : 'other';
    const metricName = isDefault ? 'status feed' : `status feed ${label}`;
    const upstreamName = isDefault ? 'status feed' : `status feed of page ${slug}`;
    const { observer, onCacheEvent } = options;
    const circuit =
      this.#circuits.get(slug) ?? this.#circuitOf(slug, upstreamName, labelled && metricName);
    const host = new URL(config.baseUrl).host;
    let slots = this.#hostSlots.get(host);
    if (!slots) {
      slots = new RequestSlots(options.config.fetchesPerHost);
      this.#hostSlots.set(host, slots);
    }
    let page: StatusPage | undefined;
    const feed = createStatusFeed({
      ...options.feed,
      page: config,
      upstreamName,
      client: { circuit, slots },
      maxDocumentBytes: Math.floor(options.config.maxBytes * DOCUMENT_BUDGET_SHARE),
      onResize: (bytes) => {
        if (page) this.#resident.resize(slug, page, bytes);
      },
      observer: observer && {
        request: (endpoint, outcome, seconds) =>
          observer.request({ ...endpoint, upstream: metricName }, outcome, seconds),
        // The circuit is the page's, told of above.
        circuit: () => {},
      },
      onCacheEvent:
        onCacheEvent &&
        ((path, event) => onCacheEvent(isDefault ? path : `${label}${path}`, event)),
    });
    const poller = new FeedPoller({
      feed,
      intervalMs: config.pollIntervalMs ?? options.config.pollIntervalMs,
      ttlMs: options.config.cacheTtlMs,
      logger: options.logger,
    });
    page = { config, feed, poller };
    return page;
  }

  /**
   * Page `slug`'s circuit, kept for as long as the gateway runs. Made here, not where the page is:
   * a closure there would keep the page's context, and with it the page, once let go.
   */
  #circuitOf(slug: string, upstreamName: string, metricName: string | false): CircuitBreaker {
    const { observer } = this.#options;
    const circuit = upstreamCircuit(
      { ...this.#options.feed.upstream, name: upstreamName, logger: this.#options.logger },
      (state) =>
        metricName ? observer?.circuit(metricName, state) : this.#otherCircuit(slug, state),
    );
    this.#circuits.set(slug, circuit);
    return circuit;
  }

  /** Counts a page past `MAX_PAGE_LABELS` whose circuit is not closed, whatever the order. */
  #otherCircuit(slug: string, state: CircuitState): void {
    if (state === 'closed') this.#openOthers.delete(slug);
    else this.#openOthers.add(slug);
    this.#options.observer?.circuitsOpen(OTHER_PAGES_UPSTREAM, this.#openOthers.size);
  }
}
