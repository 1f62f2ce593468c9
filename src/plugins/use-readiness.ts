import { setTimeout as delay } from 'node:timers/promises';
import type { Plugin } from 'graphql-yoga';
import { PATHS } from '../observability/route.js';
import type { RedisReport } from '../redis/redis-connection.js';
import type { StatusFeed } from '../upstreams/status-feed/status-feed.js';

export interface ReadinessOptions {
  /**
   * The status feed to report now, if any (asked on each probe: the pages may be reloaded), read
   * through its cache.
   * @default undefined (not reported: a gateway of several pages reads none of them for a probe)
   */
  readonly statusFeed?: () => Pick<StatusFeed, 'summary'> | undefined;
  /** Whether the gateway is shutting down: then it is no longer ready for new requests. */
  readonly isDraining: () => boolean;
  /**
   * The Redis the replicas share state through, when `REDIS_URL` is set: reported, never a reason
   * to be unready (without it the replica works alone, and answers).
   * @default undefined (not reported)
   */
  readonly redis?: { report(): RedisReport };
}

/**
 * How long a probe waits for the status feed before reporting its state as `checking`: a probe
 * must answer within an orchestrator's timeout whatever the feed does.
 */
const FEED_CHECK_MS = 1000;

/** What `/readiness` reports of the status feed. */
type FeedReport =
  | { state: 'ok' | 'stale'; fetchedAt: Date }
  | { state: 'unavailable'; reason: string }
  | { state: 'checking' };

/**
 * `GET /readiness`, next to Yoga's `/health` (alive). A replica is ready when it can answer: from
 * start-up until it begins shutting down (503 `{ready: false}` then, so that the load balancer
 * stops sending it requests while it drains). The status feed's state is reported, never a reason
 * to be unready: a third-party outage is every replica's at once, and taking them all out would
 * also take `verifyContract` and the stale snapshots the feed's fields still serve. The probe reads
 * through the shared cache (at most one feed request per TTL) and waits for it `FEED_CHECK_MS` at most.
 * Likewise Redis: while it is unavailable the replica works alone, which is worth knowing and no
 * reason to stop sending it requests.
 */
export function useReadiness({ statusFeed, isDraining, redis }: ReadinessOptions): Plugin {
  async function feedReport(statusFeed: Pick<StatusFeed, 'summary'>): Promise<FeedReport> {
    const read = statusFeed.summary().then(
      ({ fetchedAt, stale }): FeedReport => ({ state: stale ? 'stale' : 'ok', fetchedAt }),
      (error: unknown): FeedReport => ({
        state: 'unavailable',
        reason: error instanceof Error ? error.message : String(error),
      }),
    );
    const timer = new AbortController();
    const checking = delay(FEED_CHECK_MS, { state: 'checking' } as const, { signal: timer.signal });
    try {
      return await Promise.race([read, checking]);
    } finally {
      timer.abort();
    }
  }

  return {
    // Not Yoga's `useReadinessCheck`: it answers any method, at any URL that ends with its endpoint
    // (`/graphql?next=/readiness` too).
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== 'GET' || url.pathname !== PATHS.readiness) return;
      const ready = !isDraining();
      const feed = statusFeed?.();
      const body = {
        ready,
        ...(ready ? {} : { reason: 'shutting down' }),
        ...(feed ? { statusFeed: await feedReport(feed) } : {}),
        ...(redis ? { redis: redis.report() } : {}),
      };
      endResponse(
        new fetchAPI.Response(JSON.stringify(body), {
          status: ready ? 200 : 503,
          headers: {
            'content-type': 'application/json; charset=utf-8',
            'cache-control': 'no-store',
          },
        }),
      );
    },
  };
}
