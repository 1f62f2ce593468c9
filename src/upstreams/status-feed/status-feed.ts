import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { type Snapshot, SnapshotCache, type SnapshotCacheEvent } from '../snapshot-cache.js';
import { createUpstreamClient, type UpstreamObserver } from '../upstream-client.js';

type StatusFeedConfig = Config['statusFeed'];

import type { StatusSummary, UpcomingMaintenances } from './model.js';
import { type Built, buildSummary, buildUpcoming } from './snapshot.js';
import { WireSummary, WireUpcoming } from './wire.js';

export interface StatusFeedOptions extends StatusFeedConfig {
  readonly logger: Logger;
  readonly observer?: UpstreamObserver;
  /** Told of every cache read, by endpoint path, for metrics. */
  readonly onCacheEvent?: (path: string, event: SnapshotCacheEvent) => void;
}

/** The two documents of a Statuspage v2 feed, cached and shared by all requests. */
export interface StatusFeed {
  /** `GET /summary.json`: page, indicator, components, unresolved incidents, maintenances. */
  summary(requestId?: string): Promise<Snapshot<StatusSummary>>;
  /** `GET /scheduled-maintenances/upcoming.json`. */
  upcoming(requestId?: string): Promise<Snapshot<UpcomingMaintenances>>;
  /** Whether `snapshot` is still what the feed serves, fresh, without asking upstream. */
  isCurrent(snapshot: object): boolean;
}

export const SUMMARY_PATH = '/summary.json';
export const UPCOMING_PATH = '/scheduled-maintenances/upcoming.json';

export function createStatusFeed(options: StatusFeedOptions): StatusFeed {
  const { baseUrl, cacheTtlMs, maxStaleMs, upstream, logger, observer, onCacheEvent } = options;
  const client = createUpstreamClient({
    ...upstream,
    baseUrl,
    name: 'status feed',
    logger,
    ...(observer ? { observer } : {}),
  });

  function cached<Value>(
    path: string,
    fetchAndBuild: (requestId: string | undefined) => Promise<Built<Value>>,
  ) {
    return new SnapshotCache<Value>({
      ttlMs: cacheTtlMs,
      maxStaleMs,
      load: async (requestId) => {
        const { snapshot, problems } = await fetchAndBuild(requestId);
        if (problems.length > 0) {
          logger.warn({ upstream: 'status feed', path, problems }, 'status feed items left out');
        }
        return snapshot;
      },
      onEvent: (event, error) => {
        onCacheEvent?.(path, event);
        if (event === 'stale') {
          logger.warn(
            { upstream: 'status feed', path, err: error },
            'status feed failed; serving the last good snapshot',
          );
        }
      },
    });
  }

  const summary = cached(SUMMARY_PATH, async (requestId) =>
    buildSummary(await client.getJson(SUMMARY_PATH, WireSummary, { requestId })),
  );
  const upcoming = cached(UPCOMING_PATH, async (requestId) =>
    buildUpcoming(await client.getJson(UPCOMING_PATH, WireUpcoming, { requestId })),
  );

  return {
    summary: (requestId) => summary.get(requestId),
    upcoming: (requestId) => upcoming.get(requestId),
    isCurrent: (snapshot) => summary.isCurrent(snapshot) || upcoming.isCurrent(snapshot),
  };
}
