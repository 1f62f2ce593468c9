import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { slowSubscriber, tooManySubscriptions } from '../errors/subscription-error.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { ChangeBus } from '../upstreams/status-feed/change-bus.js';
import type { StatusChangeEvent } from '../upstreams/status-feed/change-event.js';
import type { FeedPoller } from '../upstreams/status-feed/feed-poller.js';
import type { FeedDocument } from '../upstreams/status-feed/status-feed.js';
import { ChangeStream, type StreamEndReason, type StreamItem } from './change-stream.js';

/** The root fields of `Subscription`: the only values the `field` label takes. */
export const SUBSCRIPTION_FIELDS = [
  'statusPageChanged',
  'componentStatusChanged',
  'incidentChanged',
  'maintenanceChanged',
] as const;
export type SubscriptionField = (typeof SUBSCRIPTION_FIELDS)[number];

/** How the client subscribed: an HTTP stream (SSE, or multipart) or a graphql-ws WebSocket. */
export type SubscriptionTransport = 'http' | 'websocket';

/** The subscriptions one WebSocket connection holds (an HTTP stream holds one and needs none). */
export interface ConnectionSubscriptions {
  open: number;
}

/** Who subscribes: for the log lines, metrics and per-connection limit. */
export interface Subscriber {
  readonly requestId: string;
  readonly transport: SubscriptionTransport;
  readonly connection?: ConnectionSubscriptions | undefined;
}

export interface SubscriptionRequest {
  readonly field: SubscriptionField;
  /** The feed documents whose changes it needs polled while it is open. */
  readonly documents: readonly FeedDocument[];
  readonly accept: (event: StatusChangeEvent) => boolean;
  /** Whether it starts with a whole-page event, before any change. */
  readonly startWithPage?: boolean;
  /** Called right before each event is handed to the executor. */
  readonly beforeEach?: () => void;
}

export interface SubscriptionRegistryOptions {
  readonly bus: ChangeBus;
  readonly poller: Pick<FeedPoller, 'acquire'>;
  readonly limits: Config['subscriptions'];
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
}

/**
 * Every subscription open on this replica, whatever its transport: it refuses those over the
 * limits before anything starts, feeds each its events from the change bus, keeps the poller
 * running for the documents they need, logs and counts each one opening and closing, and ends
 * them all when the gateway shuts down.
 */
export class SubscriptionRegistry {
  readonly #options: SubscriptionRegistryOptions;
  readonly #streams = new Set<ChangeStream>();
  readonly #unsubscribe: () => void;
  #closed = false;

  constructor(options: SubscriptionRegistryOptions) {
    this.#options = options;
    this.#unsubscribe = options.bus.subscribe((event) => {
      options.metrics.statusChange(event.type);
      for (const stream of this.#streams) stream.push(event);
    });
  }

  /** Subscriptions open now. */
  get size(): number {
    return this.#streams.size;
  }

  /**
   * Opens a subscription's stream, or throws `TOO_MANY_SUBSCRIPTIONS` when a limit is reached (or
   * the gateway is shutting down: then it completes at once).
   */
  open(subscriber: Subscriber, request: SubscriptionRequest): AsyncIterableIterator<StreamItem> {
    const { limits, logger, metrics, poller } = this.#options;
    const { requestId, transport, connection } = subscriber;
    const { field } = request;
    const refused = (error: ReturnType<typeof tooManySubscriptions>) => {
      metrics.subscriptionEnded(field, transport, 'refused');
      logger.info(
        { requestId, subscription: field, transport, limit: error.extensions.limit },
        'subscription refused',
      );
      return error;
    };
    if (this.#streams.size >= limits.maxTotal) {
      throw refused(tooManySubscriptions('MAX_SUBSCRIPTIONS', limits.maxTotal));
    }
    if (connection && connection.open >= limits.maxPerConnection) {
      throw refused(
        tooManySubscriptions('MAX_SUBSCRIPTIONS_PER_CONNECTION', limits.maxPerConnection),
      );
    }

    const started = performance.now();
    const release = this.#closed ? () => {} : poller.acquire(request.documents);
    if (connection) connection.open += 1;
    const stream: ChangeStream = new ChangeStream({
      accept: request.accept,
      initial: request.startWithPage
        ? { type: 'page', pageId: '', detectedAt: new Date().toISOString() }
        : undefined,
      backlog: limits.backlog,
      ...(request.beforeEach ? { beforeEach: request.beforeEach } : {}),
      onEnd: (reason: StreamEndReason) => {
        this.#streams.delete(stream);
        release();
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
      },
    });
    this.#streams.add(stream);
    metrics.subscriptionOpened(field, transport);
    logger.info({ requestId, subscription: field, transport }, 'subscription opened');
    if (this.#closed) stream.end('shutdown');
    return stream;
  }

  /**
   * Completes every open subscription (each client gets its events so far, then `complete`) and
   * every one opened from now on.
   */
  endAll(): void {
    this.#closed = true;
    for (const stream of [...this.#streams]) stream.end('shutdown');
  }

  /** Ends everything and stops listening to the bus. */
  close(): void {
    this.endAll();
    this.#unsubscribe();
  }
}

/** The event a stream item carries, or the error its subscription ends with. */
export function changeOf<Event extends StatusChangeEvent>(item: Event | StreamItem): Event {
  if (item.type === 'overflow') throw slowSubscriber(item.backlog);
  return item as Event;
}
