import { isDeepStrictEqual } from 'node:util';
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
 * share the label `other`, so that a file of a thousand pages cannot make a thousand series. The
 * slugs labelled are at most this many for the life of the process: a page that takes a labelled
 * page's place in a reload is `other` (its series would be new ones, and those of the page it
 * replaced stay), so reloads cannot make series without end either.
 */
export const MAX_PAGE_LABELS = 20;

/**
 * The keys of a page's entry that only the schema reads, from the configuration at the time it
 * asks (`StatusPages.config`): a change of them alone updates the page in place. Any other key
 * (`baseUrl`, `versionPattern`, and a key not listed here) is what the page's feed or poller was
 * made with: a change of it lets the page go and makes it again, and ends its subscriptions.
 */
const IN_PLACE_KEYS: ReadonlySet<string> = new Set(['name', 'chains', 'tags', 'webhookToken']);

/** What a new list of pages changed (`StatusPages.reconfigure`), each a list of slugs. */
export interface PagesChange {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Pages whose feed changed (any key but `IN_PLACE_KEYS`'s): let go, made anew when asked for. */
  readonly changed: readonly string[];
  /** Pages whose `IN_PLACE_KEYS` alone changed: the new entry is read from now on, state kept. */
  readonly updated: readonly string[];
}

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
  /** Its entry now: one whose `IN_PLACE_KEYS` alone changed replaces it. */
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
  #list: readonly StatusPageConfig[] = [];
  #configs = new Map<string, StatusPageConfig>();
  /** Each page's place in the configuration, and the pages of each tag in that order. */
  #positions = new Map<string, number>();
  #tagged = new Map<string, string[]>();
  readonly #resident: ResidentPages<OwnPage>;
  /** Each page's circuit, made when the page is first asked for and kept while it is let go. */
  readonly #circuits = new Map<string, CircuitBreaker>();
  /** The pages past `MAX_PAGE_LABELS` whose circuit is not closed. */
  readonly #openOthers = new Set<string>();
  /** Request slots by host (`host:port`), shared by the pages of each. */
  readonly #hostSlots = new Map<string, RequestSlots>();
  readonly #idleTimer: NodeJS.Timeout;
  /** Each configured chain's page (its slug) and components (their ids), by chain id. */
  #chains = new Map<string, { slug: string; components: readonly string[] }>();
  /** The pages whose metric series carry their slug, for good (see `MAX_PAGE_LABELS`). */
  readonly #labelled = new Set<string>();
  /** When each page's feed was made: it finds changes from its first load on. */
  readonly #madeAt = new WeakMap<StatusFeed, number>();

  constructor(options: StatusPagesOptions) {
    this.#options = options;
    this.#configure(options.config.pages);
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
    if (this.#list.length > MAX_PAGE_LABELS) observer?.circuitsOpen(OTHER_PAGES_UPSTREAM, 0);
    // Idle pages go within half the idle time after it is over.
    this.#idleTimer = setInterval(
      () => this.#resident.releaseIdle(),
      Math.max(config.idleMs / 2, 10),
    );
    this.#idleTimer.unref();
  }

  /** Every configured page, in configuration order: the list of now (see `reconfigure`). */
  get configs(): readonly StatusPageConfig[] {
    return this.#list;
  }

  /** The first configured page: what `statusPage` without a slug answers. */
  get defaultSlug(): string {
    return (this.#list[0] as StatusPageConfig).slug;
  }

  has(slug: string): boolean {
    return this.#configs.has(slug);
  }

  /** Page `slug`'s place in the configuration (from 0); -1 for a slug nobody configured. */
  position(slug: string): number {
    return this.#positions.get(slug) ?? -1;
  }

  /** The pages carrying `tag`, in configuration order. */
  tagged(tag: string): readonly string[] {
    return this.#tagged.get(tag) ?? [];
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

  /**
   * When page `slug` was last made (its feed, which finds changes from its first load on); undefined
   * while it is not resident: a page let go finds no changes, and its first load after is a baseline.
   */
  residentSince(slug: string): number | undefined {
    const page = this.#resident.peek(slug);
    return page && this.#madeAt.get(page.feed);
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

  /**
   * Fetches page `slug`'s documents again now, each that is held (its upstream said it changed: a
   * webhook), through their caches as a poll does: a change found is published once. A page not
   * resident here holds nothing to refetch (a followed page is always resident), and is neither
   * made for it nor made more recently used; with shared snapshots it is made, as the replicas'
   * documents may be followed on another replica, whose subscribers hear of the change through
   * the change bus. Resolves when they are in, whatever their outcome.
   */
  async refetch(slug: string): Promise<void> {
    const resident = this.#resident.peek(slug);
    const shared = this.#options.feed.sharedSnapshots !== undefined && this.has(slug);
    await (resident ?? (shared ? this.get(slug) : undefined))?.feed.refetch();
  }

  /**
   * Serves `pages` from now on (a reload of `STATUS_PAGES_FILE`, checked as at start): a page
   * whose entry is the same keeps its state, whatever its place; one whose `IN_PLACE_KEYS` alone
   * changed keeps it too, with its new entry; a page removed, or whose feed changed, is let go
   * now (caches, upstream client, poller, Redis registration, circuit), even while followed: its
   * subscriptions must be ended by the caller (`SubscriptionRegistry.endFollowing`), and a changed
   * one is made anew when next asked for. Chains follow the new list, and the default page is its
   * first. Requests already holding a page let go read it to their end.
   */
  reconfigure(pages: readonly StatusPageConfig[]): PagesChange {
    const before = this.#configs;
    const change = { added: [], removed: [], changed: [], updated: [] } as {
      [Key in keyof PagesChange]: string[];
    };
    for (const config of pages) {
      const old = before.get(config.slug);
      if (!old) change.added.push(config.slug);
      else if (!isDeepStrictEqual(feedKeysOf(old), feedKeysOf(config))) {
        change.changed.push(config.slug);
      } else if (!isDeepStrictEqual(old, config)) change.updated.push(config.slug);
    }
    this.#configure(pages);
    for (const slug of before.keys()) if (!this.#configs.has(slug)) change.removed.push(slug);
    for (const slug of [...change.removed, ...change.changed]) this.#forget(slug);
    for (const slug of change.updated) {
      const page = this.#resident.peek(slug);
      if (page) page.config = this.#configs.get(slug) as StatusPageConfig;
    }
    const hosts = new Set(pages.map(({ baseUrl }) => new URL(baseUrl).host));
    for (const host of this.#hostSlots.keys()) if (!hosts.has(host)) this.#hostSlots.delete(host);
    const others = this.#openOthers.size;
    if (pages.length > MAX_PAGE_LABELS || others > 0) {
      this.#options.observer?.circuitsOpen(OTHER_PAGES_UPSTREAM, others);
    }
    return change;
  }

  /** Stops every page's poller, and the release of idle pages. */
  close(): void {
    clearInterval(this.#idleTimer);
    for (const page of this.#resident.pages()) page.poller.close();
  }

  /** Takes `pages` as the list, its chains and its labels. */
  #configure(pages: readonly StatusPageConfig[]): void {
    if (pages.length === 0) throw new RangeError('at least one status page is configured');
    this.#list = pages;
    this.#configs = new Map(pages.map((config) => [config.slug, config]));
    this.#positions = new Map(pages.map(({ slug }, position) => [slug, position]));
    this.#tagged = new Map();
    for (const { slug, tags } of pages) {
      for (const tag of tags) {
        const slugs = this.#tagged.get(tag);
        if (slugs) slugs.push(slug);
        else this.#tagged.set(tag, [slug]);
      }
    }
    this.#chains = new Map();
    for (const { slug, chains } of pages) {
      for (const { chainId, components } of chains) this.#chains.set(chainId, { slug, components });
    }
    for (const { slug } of pages.slice(0, MAX_PAGE_LABELS)) {
      if (this.#labelled.size < MAX_PAGE_LABELS) this.#labelled.add(slug);
    }
  }

  /** Lets page `slug` go with all it keeps, its circuit too: it is no longer configured as it was. */
  #forget(slug: string): void {
    this.#resident.remove(slug);
    const circuit = this.#circuits.get(slug);
    this.#circuits.delete(slug);
    if (this.#openOthers.delete(slug)) {
      this.#options.observer?.circuitsOpen(OTHER_PAGES_UPSTREAM, this.#openOthers.size);
    }
    const metricName = this.#metricNameOf(slug);
    // Its series would otherwise stay at its last state, open perhaps, for good.
    if (metricName && circuit && circuit.state !== 'closed') {
      this.#options.observer?.circuit(metricName, 'closed');
    }
  }

  #create(config: StatusPageConfig): OwnPage {
    const options = this.#options;
    const { slug } = config;
    const isDefault = slug === DEFAULT_PAGE_SLUG;
    // The default page keeps the names of a gateway that served one page: its metrics, logs and
    // errors read as they did.
    const ownName = this.#metricNameOf(slug);
    const metricName = ownName || 'status feed other';
    const label = ownName ? slug : 'other';
    const upstreamName = isDefault ? 'status feed' : `status feed of page ${slug}`;
    const { observer, onCacheEvent } = options;
    const circuit = this.#circuits.get(slug) ?? this.#circuitOf(slug, upstreamName, ownName);
    const host = new URL(config.baseUrl).host;
    let slots = this.#hostSlots.get(host);
    if (!slots) {
      slots = new RequestSlots(options.config.fetchesPerHost);
      this.#hostSlots.set(host, slots);
    }
    let page: OwnPage | undefined;
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
    this.#madeAt.set(feed, (options.now ?? Date.now)());
    return page;
  }

  /**
   * Page `slug`'s circuit, kept for as long as the gateway runs. Made here, not where the page is:
   * a closure there would keep the page's context, and with it the page, once let go.
   */
  #circuitOf(slug: string, upstreamName: string, metricName: string | false): CircuitBreaker {
    const circuit: CircuitBreaker = upstreamCircuit(
      { ...this.#options.feed.upstream, name: upstreamName, logger: this.#options.logger },
      (state) => {
        // A circuit forgotten in a reload, told of by a request that still held its page.
        if (this.#circuits.get(slug) !== circuit) return;
        if (metricName) this.#options.observer?.circuit(metricName, state);
        else this.#otherCircuit(slug, state);
      },
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

  /**
   * The name of page `slug`'s own metric series (the default page keeps the name of a gateway of
   * one page); `false` when it has none, and shares `other`'s.
   */
  #metricNameOf(slug: string): string | false {
    if (!this.#labelled.has(slug)) return false;
    return slug === DEFAULT_PAGE_SLUG ? 'status feed' : `status feed ${slug}`;
  }
}

/** A page as kept here: its entry is replaced when only its `IN_PLACE_KEYS` change. */
type OwnPage = { -readonly [Key in keyof StatusPage]: StatusPage[Key] };

/** What of a page's entry its feed and poller were made with: all but `IN_PLACE_KEYS`. */
function feedKeysOf(config: StatusPageConfig): Record<string, unknown> {
  return Object.fromEntries(Object.entries(config).filter(([key]) => !IN_PLACE_KEYS.has(key)));
}
