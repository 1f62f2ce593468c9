import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ChangeBus } from '../core/status/change-bus.js';
import { pageSlugOf, type StatusChangeEvent } from '../core/status/change-event.js';
import {
  pagesChanged,
  slowSubscriber,
  tooManySubscriptions,
} from '../errors/subscription-error.js';
import { HEAP_LIMIT, liveHeapBytes } from '../observability/live-heap.js';
import type { FeedDocument } from '../upstreams/status-feed/status-feed.js';
import type { StatusPages } from '../upstreams/status-feed/status-pages.js';
import {
  ChangeStream,
  type PagesEndReason,
  type StreamEndReason,
  type StreamItem,
} from './change-stream.js';
import { ClientCounts } from './client-counts.js';

/** The root fields of `Subscription`: the only values the `field` label takes. */
export const SUBSCRIPTION_FIELDS = [
  'statusPageChanged',
  'componentStatusChanged',
  'incidentChanged',
  'maintenanceChanged',
  'verificationJobChanged',
] as const;
export type SubscriptionField = (typeof SUBSCRIPTION_FIELDS)[number];

/** The subscriptions one WebSocket connection holds (an HTTP stream holds one and needs none). */
export interface ConnectionSubscriptions {
  open: number;
}

/** Who subscribes: for the log lines, metrics and per-connection and per-client limits. */
export interface Subscriber {
  readonly requestId: string;
  /** How the client subscribed: an HTTP stream (SSE, or multipart) or a graphql-ws WebSocket. */
  readonly transport: 'http' | 'websocket';
  /** The client as the rate limits know it (`clientAddressOf`), whatever its transport. */
  readonly clientAddress: string;
  readonly connection?: ConnectionSubscriptions | undefined;
  /**
   * Set when the subscription is the source a crowd of subscribers share (`SharedSubscriptions`),
   * not one client's: it is not admitted or counted itself (each of its subscribers is, through
   * `admit`), and it tells its sharer what it is.
   */
  readonly sharedBy?: SharedSource | undefined;
}

/** What a shared subscription's source tells the subscribers who share it. */
export interface SharedSource {
  /** The source is a subscription of `field`; each subscriber is admitted to it from now on. */
  opened(field: SubscriptionField, options: { readonly wholeStateEvents: boolean }): void;
  /** The source's stream ended, for this reason. */
  ended(reason: StreamEndReason): void;
}

/** A subscriber let in by `admit`: its end, called once, counts it out and logs why. */
export type Admission = (reason: StreamEndReason) => void;

export interface SubscriptionRequest {
  readonly field: SubscriptionField;
  /** The slugs of the pages it follows: it hears of their changes only, and polls them alone. */
  readonly pages: readonly string[];
  /** The feed documents whose changes it needs polled while it is open. */
  readonly documents: readonly FeedDocument[];
  readonly accept: (event: StatusChangeEvent) => boolean;
  /** Whether it starts with a whole-page event of each of its pages, before any change. */
  readonly startWithPage?: boolean;
  /**
   * Whether each of its events shows the subscription's whole state (a page, a job), so that a
   * late subscriber of a shared one starts with the last (`SharedSubscriptions`). Implied by
   * `startWithPage`.
   */
  readonly wholeStateEvents?: boolean;
  /** Called right before each event is handed to the executor. */
  readonly beforeEach?: () => void;
}

/**
 * Streams handed an event at once, before the registry lets the event loop turn. An event's
 * execution for a subscriber normally ends within the turn it starts in (it reads snapshots
 * already fetched), so this bounds how many answers are built at once: every `statusPageChanged`
 * subscriber of a 500-component page building its 300 KB page tree together ran 500 of them out
 * of heap. It also lets requests through between batches.
 */
const FAN_OUT_BATCH = 16;

export interface SubscriptionRegistryOptions {
  readonly bus: ChangeBus;
  readonly poller: Pick<StatusPages, 'acquire'>;
  readonly limits: Config['subscriptions'];
  readonly logger: Logger;
  readonly metrics: Omit<SubscriptionMetrics, 'subscriptionFannedOut'>;
}

/** What subscriptions count, implemented by `GatewayMetrics` (this layer knows nothing of it). */
export interface SubscriptionMetrics {
  statusChange(type: string): void;
  subscriptionOpened(field: string, transport: string): void;
  subscriptionEnded(field: string, transport: string, reason: string): void;
  subscriptionFannedOut(field: string, seconds: number): void;
  error(code: unknown): void;
}

/**
 * Every subscription open on this replica, whatever its transport: it refuses those over the
 * limits before anything starts, feeds each its events from the change bus, keeps the poller
 * running for the documents they need, logs and counts each one opening and closing, and ends
 * them all when the gateway shuts down.
 */
export class SubscriptionRegistry {
  readonly #options: SubscriptionRegistryOptions;
  /** Every open stream, with the slugs of the pages it follows. */
  readonly #streams = new Map<ChangeStream, ReadonlySet<string>>();
  /** Subscribers admitted and not yet ended, by client. */
  readonly #open = new ClientCounts();
  /** Of them, those over SSE: each holds an HTTP connection. */
  #openOverHttp = 0;
  readonly #unsubscribe: () => void;
  /** Events being handed out, oldest first, each to the streams open when it came. */
  readonly #fanOuts: { event: StatusChangeEvent; streams: ChangeStream[]; next: number }[] = [];
  /** The first page of the subscriptions opened in this turn, by slug (see `#firstPage`). */
  readonly #openingPages = new Map<string, StatusChangeEvent>();
  #closed = false;

  constructor(options: SubscriptionRegistryOptions) {
    this.#options = options;
    this.#unsubscribe = options.bus.subscribe((event) => {
      options.metrics.statusChange(event.type);
      this.#handOut(event, [...this.#streams.keys()]);
    });
  }

  /**
   * The first page of a subscription opened now: one event for all those opened in the same turn
   * of the event loop, which read the same snapshots, so that subscribers of the same operation
   * share its execution (`useMultiplexedSubscriptions`) as they share a change's: a crowd arriving
   * at once costs one page tree, not one each. A later turn gets a page of its own.
   */
  #firstPage(pageSlug: string): StatusChangeEvent {
    const opening = this.#openingPages.get(pageSlug);
    if (opening) return opening;
    const page: StatusChangeEvent = {
      type: 'page',
      pageSlug,
      pageId: '',
      detectedAt: new Date().toISOString(),
    };
    if (this.#openingPages.size === 0) setImmediate(() => this.#openingPages.clear());
    this.#openingPages.set(pageSlug, page);
    return page;
  }

  /** Queues `event` for `streams`, after every event queued before it. */
  #handOut(event: StatusChangeEvent, streams: ChangeStream[]): void {
    if (streams.length === 0) return;
    this.#fanOuts.push({ event, streams, next: 0 });
    if (this.#fanOuts.length === 1) this.#fanOut();
  }

  /**
   * Hands the oldest event to its next batch of streams, and schedules the rest for the next turn
   * of the event loop. One event reaches every stream before the next starts: each stream gets
   * them in order.
   */
  #fanOut(): void {
    for (let budget = FAN_OUT_BATCH; budget > 0; budget -= 1) {
      const fanOut = this.#fanOuts[0];
      if (fanOut === undefined) return;
      fanOut.streams[fanOut.next]?.push(fanOut.event);
      fanOut.next += 1;
      if (fanOut.next >= fanOut.streams.length) this.#fanOuts.shift();
    }
    if (this.#fanOuts.length > 0) setImmediate(() => this.#fanOut());
  }

  /**
   * Lets a subscriber of `field` in, or throws `TOO_MANY_SUBSCRIPTIONS` when a limit is reached:
   * counts it (in total, on its connection, for its client), logs it and counts it in the metrics.
   * Its end undoes that, once. Every subscriber on every transport is admitted here, whether its
   * subscription has a stream of its own (`open`) or shares one (`SharedSubscriptions`).
   */
  admit(subscriber: Subscriber, field: SubscriptionField): Admission {
    const { limits, logger, metrics } = this.#options;
    const { requestId, transport, connection, clientAddress } = subscriber;
    const refused = (error: ReturnType<typeof tooManySubscriptions>) => {
      metrics.subscriptionEnded(field, transport, 'refused');
      logger.info(
        { requestId, subscription: field, transport, limit: error.extensions.limit },
        'subscription refused',
      );
      return error;
    };
    if (this.#open.total >= limits.maxTotal) {
      throw refused(tooManySubscriptions('MAX_SUBSCRIPTIONS', limits.maxTotal));
    }
    if (transport === 'http' && this.#openOverHttp >= limits.maxSse) {
      throw refused(tooManySubscriptions('MAX_SSE_SUBSCRIPTIONS', limits.maxSse));
    }
    if (connection && connection.open >= limits.maxPerConnection) {
      throw refused(
        tooManySubscriptions('MAX_SUBSCRIPTIONS_PER_CONNECTION', limits.maxPerConnection),
      );
    }
    if (this.#open.of(clientAddress) >= limits.maxPerClient) {
      throw refused(tooManySubscriptions('MAX_SUBSCRIPTIONS_PER_CLIENT', limits.maxPerClient));
    }
    // Whatever the counts allow: what a subscription holds depends on its selection, the page and
    // its clients' reading, so it is the heap that says whether another fits. Its live objects:
    // garbage not yet collected never refuses a client.
    const line = limits.maxHeapShare * HEAP_LIMIT;
    if (liveHeapBytes(line) > line) {
      throw refused(tooManySubscriptions('SUBSCRIPTION_HEAP_LIMIT', limits.maxHeapShare));
    }
    const started = performance.now();
    const release = this.#open.add(clientAddress);
    if (transport === 'http') this.#openOverHttp += 1;
    if (connection) connection.open += 1;
    metrics.subscriptionOpened(field, transport);
    logger.info({ requestId, subscription: field, transport }, 'subscription opened');
    let ended = false;
    return (reason) => {
      if (ended) return;
      ended = true;
      release();
      if (transport === 'http') this.#openOverHttp -= 1;
      if (connection) connection.open -= 1;
      metrics.subscriptionEnded(field, transport, reason);
      logger.info(
        {
          requestId,
          subscription: field,
          transport,
          reason,
          ms: Math.round(performance.now() - started),
        },
        'subscription closed',
      );
    };
  }

  /**
   * Opens a subscription's stream, or throws `TOO_MANY_SUBSCRIPTIONS` when a limit is reached (or
   * the gateway is shutting down: then it completes at once). A shared source (`sharedBy`) is not
   * admitted: its subscribers are; one that cannot be shared tells nobody, and is admitted as the
   * subscription of the client whose request started it.
   */
  open(subscriber: Subscriber, request: SubscriptionRequest): ChangeStream {
    const { limits, poller, metrics } = this.#options;
    const pages = new Set(request.pages);
    // Shared, a late subscriber starts with the last event: one page's, so a subscription that
    // starts with several pages is its one client's alone, admitted here.
    const sharedBy = request.startWithPage && pages.size > 1 ? undefined : subscriber.sharedBy;
    let release: () => void;
    try {
      // Refused (the followed pages hold STATUS_PAGES_MAX_BYTES) before anything is counted.
      release = this.#closed ? () => {} : poller.acquire(request.pages, request.documents);
    } catch (error) {
      metrics.subscriptionEnded(request.field, subscriber.transport, 'refused');
      throw error;
    }
    let admission: Admission | undefined;
    try {
      admission = sharedBy ? undefined : this.admit(subscriber, request.field);
    } catch (error) {
      release();
      throw error;
    }
    const stream: ChangeStream = new ChangeStream({
      accept: (event) => pages.has(pageSlugOf(event)) && request.accept(event),
      backlog: limits.backlog,
      beforeEach: request.beforeEach,
      onEnd: (reason) => {
        this.#streams.delete(stream);
        release();
        admission?.(reason);
        sharedBy?.ended(reason);
      },
    });
    this.#streams.set(stream, pages);
    sharedBy?.opened(request.field, {
      wholeStateEvents: request.startWithPage === true || request.wholeStateEvents === true,
    });
    if (request.startWithPage) {
      for (const slug of pages) {
        const page = this.#firstPage(slug);
        // The first page is an answer built like any event's: handed out in the same batches, so
        // that a crowd subscribing at once (each first page a whole page tree) does not build them
        // all in one turn of the event loop while /health and every other request wait.
        if (this.#closed) stream.push(page);
        else this.#handOut(page, [stream]);
      }
    }
    if (this.#closed) stream.end('shutdown');
    return stream;
  }

  /**
   * Completes every open subscription that follows any of `slugs` (pages a reload removed, or
   * whose feed it changed), each with an error that says so and names them, then `complete`: its
   * client subscribes again to the pages that are configured now. A subscription to several pages
   * ends when one of them goes: what it asked for is no longer there. Returns how many ended.
   */
  endFollowing(slugs: Iterable<string>, reason: PagesEndReason): number {
    const gone = new Set(slugs);
    if (gone.size === 0) return 0;
    let ended = 0;
    for (const [stream, pages] of [...this.#streams]) {
      const named = [...pages].filter((slug) => gone.has(slug));
      if (named.length === 0) continue;
      stream.endWith({ type: 'pages', reason, slugs: named }, reason);
      ended += 1;
    }
    return ended;
  }

  /**
   * Completes every open subscription (each client gets its events so far, then `complete`) and
   * every one opened from now on.
   */
  endAll(): void {
    this.#closed = true;
    for (const stream of [...this.#streams.keys()]) stream.end('shutdown');
  }

  /** Ends everything and stops listening to the bus. */
  close(): void {
    this.#fanOuts.length = 0;
    this.endAll();
    this.#unsubscribe();
  }
}

/** The event a stream item carries, or the error its subscription ends with. */
export function changeOf<Event extends StatusChangeEvent>(item: Event | StreamItem): Event {
  if (item.type === 'overflow') throw slowSubscriber('SUBSCRIPTION_BACKLOG', item.backlog);
  if (item.type === 'pages') throw pagesChanged(item.reason, item.slugs);
  return item as Event;
}
