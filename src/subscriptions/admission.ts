import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { tooManySubscriptions } from '../errors/subscription-error.js';
import { HEAP_LIMIT, liveHeapBytes } from '../observability/live-heap.js';
import type { FeedDocument } from '../upstreams/status-feed/status-feed.js';
import type { StatusPages } from '../upstreams/status-feed/status-pages.js';
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

/**
 * Why a subscriber's subscription ended, as its close log line and metrics say: `complete` when it
 * had nothing more to send (the job it watched finished); `page-removed` and `page-changed` when a
 * reload of `STATUS_PAGES_FILE` removed a page it follows or changed its feed.
 */
export type EndReason = 'client' | 'complete' | 'shutdown' | 'slow' | PagesEndReason;
export type PagesEndReason = 'page-removed' | 'page-changed';

/** Who subscribes: for the log lines, metrics and the limits per connection and per client. */
export interface Subscriber {
  readonly requestId: string;
  /** How the client subscribed: an HTTP stream (SSE, or multipart) or a graphql-ws WebSocket. */
  readonly transport: 'http' | 'websocket';
  /** The client as the rate limits know it (`clientAddressOf`), whatever its transport. */
  readonly clientAddress: string;
  /** The subscriptions its WebSocket holds (an HTTP stream holds one and needs none). */
  readonly connection?: { open: number } | undefined;
}

/** A subscriber let in: called once, it counts the subscriber out and logs why it went. */
export type Release = (reason: EndReason) => void;

/** What subscriptions count, implemented by `GatewayMetrics` (this layer knows nothing of it). */
export interface SubscriptionMetrics {
  statusChange(type: string): void;
  subscriptionOpened(field: string, transport: string): void;
  subscriptionEnded(field: string, transport: string, reason: string): void;
  subscriptionExecuted(field: string): void;
  subscriptionFannedOut(field: string, seconds: number): void;
  error(code: unknown): void;
}

export interface AdmissionOptions {
  readonly limits: Config['subscriptions'];
  readonly pages: Pick<StatusPages, 'acquire'>;
  readonly logger: Logger;
  readonly metrics: SubscriptionMetrics;
}

/**
 * Who may hold a subscription, asked by the hub before anything is routed: every subscriber on
 * every transport is let in here (`MAX_SUBSCRIPTIONS`, `MAX_SSE_SUBSCRIPTIONS`, per connection, per
 * client, and the live heap), counted, logged and measured as it opens and ends; and every source
 * that follows pages has them polled here, within `STATUS_PAGES_MAX_BYTES`.
 */
export class Admission {
  readonly #options: AdmissionOptions;
  /** Subscribers let in and not yet ended, by client. */
  readonly #open = new ClientCounts();
  /** Of them, those over HTTP: each holds a connection. */
  #openOverHttp = 0;

  constructor(options: AdmissionOptions) {
    this.#options = options;
  }

  #refused(
    subscriber: Subscriber,
    field: SubscriptionField,
    error: Error & { extensions?: object },
  ) {
    const { logger, metrics } = this.#options;
    metrics.subscriptionEnded(field, subscriber.transport, 'refused');
    const { limit } = (error.extensions ?? {}) as { limit?: string };
    logger.info(
      {
        requestId: subscriber.requestId,
        subscription: field,
        transport: subscriber.transport,
        limit,
      },
      'subscription refused',
    );
    return error;
  }

  /**
   * Lets `subscriber` in to a subscription of `field`, or throws `TOO_MANY_SUBSCRIPTIONS` when a
   * limit is reached. Its release undoes that, once.
   */
  admit(subscriber: Subscriber, field: SubscriptionField): Release {
    const { limits, logger, metrics } = this.#options;
    const { requestId, transport, connection, clientAddress } = subscriber;
    const refuse = (error: ReturnType<typeof tooManySubscriptions>) =>
      this.#refused(subscriber, field, error);
    if (this.#open.total >= limits.maxTotal) {
      throw refuse(tooManySubscriptions('MAX_SUBSCRIPTIONS', limits.maxTotal));
    }
    if (transport === 'http' && this.#openOverHttp >= limits.maxSse) {
      throw refuse(tooManySubscriptions('MAX_SSE_SUBSCRIPTIONS', limits.maxSse));
    }
    if (connection && connection.open >= limits.maxPerConnection) {
      throw refuse(
        tooManySubscriptions('MAX_SUBSCRIPTIONS_PER_CONNECTION', limits.maxPerConnection),
      );
    }
    if (this.#open.of(clientAddress) >= limits.maxPerClient) {
      throw refuse(tooManySubscriptions('MAX_SUBSCRIPTIONS_PER_CLIENT', limits.maxPerClient));
    }
    // Whatever the counts allow: what a subscription holds depends on its selection, the page and
    // its clients' reading, so it is the heap that says whether another fits. Its live objects:
    // garbage not yet collected never refuses a client.
    const line = limits.maxHeapShare * HEAP_LIMIT;
    if (liveHeapBytes(line) > line) {
      throw refuse(tooManySubscriptions('SUBSCRIPTION_HEAP_LIMIT', limits.maxHeapShare));
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
      if (reason === 'slow') metrics.error('SLOW_SUBSCRIBER');
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
   * Has `documents` of `pages` polled, and those pages kept resident, until the returned release is
   * called; refused with `TOO_MANY_SUBSCRIPTIONS` (`STATUS_PAGES_MAX_BYTES`) when the pages
   * followed hold as much as the gateway keeps and one of these is not followed yet.
   */
  follow(
    subscriber: Subscriber,
    field: SubscriptionField,
    pages: readonly string[],
    documents: readonly FeedDocument[],
  ): () => void {
    if (pages.length === 0) return () => {};
    try {
      return this.#options.pages.acquire(pages, documents);
    } catch (error) {
      this.#options.metrics.subscriptionEnded(field, subscriber.transport, 'refused');
      throw error;
    }
  }
}
