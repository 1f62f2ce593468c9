import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Config } from '../../config.js';
import type { Tracing } from '../../observability/tracing.js';
import type { RedisSnapshotStore } from '../redis-snapshot-store.js';
import { type Snapshot, SnapshotCache, type SnapshotCacheEvent } from '../snapshot-cache.js';
import { createUpstreamClient, type UpstreamObserver } from '../upstream-client.js';

type StatusFeedConfig = Config['statusFeed'];

import type {
  IncidentHistory,
  MaintenanceHistory,
  StatusSummary,
  UpcomingMaintenances,
} from './model.js';
import {
  type Built,
  buildIncidentHistory,
  buildMaintenanceHistory,
  buildSummary,
  buildUpcoming,
} from './snapshot.js';
import { WireIncidentHistory, WireMaintenanceHistory, WireSummary, WireUpcoming } from './wire.js';

export interface StatusFeedOptions extends StatusFeedConfig {
  readonly logger: Logger;
  readonly observer?: UpstreamObserver;
  /** Traces each upstream request (see `UpstreamClientOptions.tracing`). */
  readonly tracing?: Tracing | undefined;
  /** Told of every cache read, by endpoint path, for metrics. */
  readonly onCacheEvent?: (path: string, event: SnapshotCacheEvent) => void;
  /**
   * Shares the documents with the other replicas (one upstream request per TTL across them all).
   * @default undefined (this replica alone)
   */
  readonly sharedSnapshots?: RedisSnapshotStore;
}

/** The documents of a Statuspage v2 feed, each cached and shared by all requests. */
export interface StatusFeed {
  /** `GET /summary.json`: page, indicator, components, unresolved incidents, maintenances. */
  summary(requestId?: string): Promise<Snapshot<StatusSummary>>;
  /** `GET /scheduled-maintenances/upcoming.json`. */
  upcoming(requestId?: string): Promise<Snapshot<UpcomingMaintenances>>;
  /** `GET /incidents.json`: the 50 most recent incidents, resolved ones included. */
  incidentHistory(requestId?: string): Promise<Snapshot<IncidentHistory>>;
  /** `GET /scheduled-maintenances.json`: the 50 most recent maintenances. */
  maintenanceHistory(requestId?: string): Promise<Snapshot<MaintenanceHistory>>;
  /** Whether `snapshot` is still what the feed serves, fresh, without asking upstream. */
  isCurrent(snapshot: object): boolean;
}

export const SUMMARY_PATH = '/summary.json';
export const UPCOMING_PATH = '/scheduled-maintenances/upcoming.json';
export const INCIDENT_HISTORY_PATH = '/incidents.json';
export const MAINTENANCE_HISTORY_PATH = '/scheduled-maintenances.json';

export function createStatusFeed(options: StatusFeedOptions): StatusFeed {
  const { baseUrl, cacheTtlMs, maxStaleMs, upstream, logger, observer, onCacheEvent, tracing } =
    options;
  const { sharedSnapshots } = options;
  const client = createUpstreamClient({
    ...upstream,
    baseUrl,
    name: 'status feed',
    logger,
    ...(observer ? { observer } : {}),
    tracing,
  });

  /**
   * One document's cache. A document the page may not serve at all (some Statuspage-compatible
   * hosts answer 404 for all but the summary) keeps its failure for a TTL too, so that asking for it
   * does not cost an upstream request each time.
   */
  function cached<Wire, Value>(
    path: string,
    schema: z.ZodType<Wire>,
    build: (wire: Wire) => Built<Value>,
    { optional = false } = {},
  ) {
    // Logged when the document starts and stops being served stale, not on every read of it.
    let servingStale = false;
    const failureTtlMs = optional ? cacheTtlMs : 0;
    const fetch = (requestId?: string) => client.getJson(path, schema, { requestId });
    const buildLogged = (wire: Wire): Value => {
      const { snapshot, problems } = build(wire);
      if (servingStale) {
        servingStale = false;
        logger.info({ upstream: 'status feed', path }, 'status feed answers again');
      }
      if (problems.length > 0) {
        logger.warn({ upstream: 'status feed', path, problems }, 'status feed items left out');
      }
      return snapshot;
    };
    return new SnapshotCache<Value>({
      ttlMs: cacheTtlMs,
      maxStaleMs,
      failureTtlMs,
      load: async (requestId) => buildLogged(await fetch(requestId)),
      ...(sharedSnapshots
        ? {
            sharing: sharedSnapshots.document({
              name: path,
              fetch,
              schema,
              build: buildLogged,
              ttlMs: cacheTtlMs,
              retainMs: maxStaleMs + cacheTtlMs,
              failureTtlMs,
              lockMs: upstream.timeoutMs,
            }),
          }
        : {}),
      onEvent: (event, error) => {
        onCacheEvent?.(path, event);
        if (event === 'stale' && !servingStale) {
          servingStale = true;
          logger.warn(
            { upstream: 'status feed', path, err: error },
            'status feed failed; serving the last good snapshot',
          );
        }
      },
    });
  }

  const summary = cached(SUMMARY_PATH, WireSummary, buildSummary);
  const upcoming = cached(UPCOMING_PATH, WireUpcoming, buildUpcoming, { optional: true });
  const incidentHistory = cached(INCIDENT_HISTORY_PATH, WireIncidentHistory, buildIncidentHistory, {
    optional: true,
  });
  const maintenanceHistory = cached(
    MAINTENANCE_HISTORY_PATH,
    WireMaintenanceHistory,
    buildMaintenanceHistory,
    { optional: true },
  );
  const documents = [summary, upcoming, incidentHistory, maintenanceHistory] as const;

  return {
    summary: (requestId) => summary.get(requestId),
    upcoming: (requestId) => upcoming.get(requestId),
    incidentHistory: (requestId) => incidentHistory.get(requestId),
    maintenanceHistory: (requestId) => maintenanceHistory.get(requestId),
    isCurrent: (snapshot) => documents.some((document) => document.isCurrent(snapshot)),
  };
}
