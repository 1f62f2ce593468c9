import type { Logger } from 'pino';

export interface WebhookRefetchesOptions {
  /** Fetches a page's documents again now (`StatusPages.refetch`). */
  readonly refetch: (slug: string) => Promise<void>;
  /**
   * The shortest time between two refetches of one page: a change a webhook announces reaches
   * subscribers within it (and the refetch's own time), and a page's webhooks cost at most one
   * refetch of its documents in it.
   * @default 1000
   */
  readonly intervalMs?: number;
  readonly logger: Pick<Logger, 'debug'>;
}

interface Pacing {
  /** Whether a webhook came since the last refetch started: one more is due when the time is up. */
  due: boolean;
  readonly timer: NodeJS.Timeout;
}

/**
 * The refetches webhooks ask for, at most one per page per interval: the first webhook of a page
 * refetches it at once, those that come within the interval after are one refetch when it is over
 * (a change they announce may have come after the first refetch read the page), and so on. A burst
 * of any size costs a page two refetches, a steady stream one per interval: whoever holds a page's
 * token can make it cost no more. A page is remembered only while its interval runs.
 */
export class WebhookRefetches {
  readonly #options: WebhookRefetchesOptions;
  readonly #pacing = new Map<string, Pacing>();
  #closed = false;

  constructor(options: WebhookRefetchesOptions) {
    this.#options = options;
  }

  /** A webhook of page `slug` came: refetches it now, or when its interval is over. */
  request(slug: string): void {
    if (this.#closed) return;
    const pacing = this.#pacing.get(slug);
    if (pacing) pacing.due = true;
    else this.#start(slug);
  }

  /** Drops what is due, and refetches nothing more. */
  close(): void {
    this.#closed = true;
    for (const { timer } of this.#pacing.values()) clearTimeout(timer);
    this.#pacing.clear();
  }

  #start(slug: string): void {
    const { refetch, intervalMs = 1_000, logger } = this.#options;
    const timer = setTimeout(() => {
      const ended = this.#pacing.get(slug);
      this.#pacing.delete(slug);
      if (ended?.due && !this.#closed) this.#start(slug);
    }, intervalMs);
    timer.unref();
    this.#pacing.set(slug, { due: false, timer });
    logger.debug({ slug }, 'status page refetched for its webhook');
    refetch(slug).catch((error: unknown) =>
      logger.debug({ err: error, slug }, 'refetching a status page for its webhook failed'),
    );
  }
}
