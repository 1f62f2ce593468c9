import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Config, StatusPageConfig } from '../../config.js';
import type { ChangeBus } from '../../core/status/change-bus.js';
import type { StatusChangeEvent } from '../../core/status/change-event.js';
import { DEFAULT_PAGE_SLUG } from '../../core/status/model.js';
import {
  type Built,
  buildIncidentHistory,
  buildMaintenanceHistory,
  buildSummary,
  buildUpcoming,
} from '../../core/status/snapshot.js';
import {
  type FeedSnapshots,
  incidentHistoryChanges,
  maintenanceHistoryChanges,
  summaryChanges,
  upcomingChanges,
} from '../../core/status/status-diff.js';
import {
  WireIncidentHistory,
  WireMaintenanceHistory,
  WireSummary,
  WireUpcoming,
} from '../../core/status/wire.js';
import type { Tracing } from '../../observability/tracing.js';
import type { RedisSnapshotStore } from '../redis-snapshot-store.js';
import { type Snapshot, SnapshotCache, type SnapshotCacheEvent } from '../snapshot-cache.js';
import { createUpstreamClient, type UpstreamObserver } from '../upstream-client.js';

export interface StatusFeedOptions extends Omit<Config['statusFeed'], 'pollIntervalMs' | 'pages'> {
  /** The configured page this feed reads: its URL, and the slug everything read from it carries. */
  readonly page: Pick<StatusPageConfig, 'slug' | 'baseUrl' | 'versionPattern'>;
  /** What errors, logs and metrics call the upstream. */
  readonly upstreamName: string;
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
  /**
   * Where the changes found between successive loads of a document go (see `status-diff.ts`);
   * none are looked for without it.
   */
  readonly changes?: Pick<ChangeBus, 'publish'>;
}

/** The feed's documents, by the name of the `StatusFeed` method that reads each. */
export const FEED_DOCUMENTS = [
  'summary',
  'upcoming',
  'incidentHistory',
  'maintenanceHistory',
] as const;
export type FeedDocument = (typeof FEED_DOCUMENTS)[number];

export type StatusFeed = ReturnType<typeof createStatusFeed>;

export const SUMMARY_PATH = '/summary.json';
export const UPCOMING_PATH = '/scheduled-maintenances/upcoming.json';
export const INCIDENT_HISTORY_PATH = '/incidents.json';
export const MAINTENANCE_HISTORY_PATH = '/scheduled-maintenances.json';

/** The documents of a Statuspage v2 feed, each cached and shared by all requests. */
export function createStatusFeed(options: StatusFeedOptions) {
  const { page, cacheTtlMs, maxStaleMs, upstream, logger, observer, onCacheEvent, tracing } =
    options;
  const { sharedSnapshots, changes, upstreamName } = options;
  const client = createUpstreamClient({
    ...upstream,
    baseUrl: page.baseUrl,
    name: upstreamName,
    logger,
    observer,
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
    build: (wire: Wire, page: StatusFeedOptions['page']) => Built<Value>,
    diff: Diff<Value>,
    { optional = false } = {},
  ) {
    // Logged when the document starts and stops being served stale, not on every read of it.
    let servingStale = false;
    const failureTtlMs = optional ? cacheTtlMs : 0;
    const fetch = (requestId?: string) => client.getJson(path, schema, { requestId });
    const buildLogged = (wire: Wire): Value => {
      const { snapshot, problems } = build(wire, page);
      if (servingStale) {
        servingStale = false;
        logger.info({ upstream: upstreamName, path }, 'status feed answers again');
      }
      if (problems.length > 0) {
        logger.warn({ upstream: upstreamName, path, problems }, 'status feed items left out');
      }
      return snapshot;
    };
    return new SnapshotCache<Value>({
      ttlMs: cacheTtlMs,
      maxStaleMs,
      failureTtlMs,
      load: async (requestId) => buildLogged(await fetch(requestId)),
      sharing: sharedSnapshots?.document({
        name: sharedName(page.slug, path),
        upstream: upstreamName,
        fetch,
        schema,
        build: buildLogged,
        ttlMs: cacheTtlMs,
        retainMs: maxStaleMs + cacheTtlMs,
        failureTtlMs,
        lockMs: upstream.timeoutMs,
      }),
      onLoaded:
        changes &&
        ((previous, next) => {
          // The first load is the baseline: there is nothing it changed.
          if (!previous) return;
          let found: StatusChangeEvent[];
          try {
            found = diff(previous.value, next.value, next.fetchedAt, snapshots());
          } catch (error) {
            logger.error({ err: error, path }, 'finding the changes of a status feed load failed');
            return;
          }
          for (const event of found) changes.publish(event);
        }),
      onEvent: (event, error) => {
        onCacheEvent?.(path, event);
        if (event === 'stale' && !servingStale) {
          servingStale = true;
          logger.warn(
            { upstream: upstreamName, path, err: error },
            'status feed failed; serving the last good snapshot',
          );
        }
      },
    });
  }

  const summary = cached(SUMMARY_PATH, WireSummary, buildSummary, summaryChanges);
  const upcoming = cached(UPCOMING_PATH, WireUpcoming, buildUpcoming, upcomingChanges, {
    optional: true,
  });
  const incidentHistory = cached(
    INCIDENT_HISTORY_PATH,
    WireIncidentHistory,
    buildIncidentHistory,
    incidentHistoryChanges,
    { optional: true },
  );
  const maintenanceHistory = cached(
    MAINTENANCE_HISTORY_PATH,
    WireMaintenanceHistory,
    buildMaintenanceHistory,
    maintenanceHistoryChanges,
    { optional: true },
  );
  const caches = { summary, upcoming, incidentHistory, maintenanceHistory } as const;
  const documents = Object.values(caches);
  /** Each document as it stands, without fetching: what one document's diff checks against. */
  const snapshots = (): FeedSnapshots => ({
    summary: summary.current?.value,
    upcoming: upcoming.current?.value,
    incidentHistory: incidentHistory.current?.value,
    maintenanceHistory: maintenanceHistory.current?.value,
  });

  return {
    /** `GET /summary.json`: page, indicator, components, unresolved incidents, maintenances. */
    summary: (requestId?: string) => summary.get(requestId),
    /** `GET /scheduled-maintenances/upcoming.json`. */
    upcoming: (requestId?: string) => upcoming.get(requestId),
    /** `GET /incidents.json`: the 50 most recent incidents, resolved ones included. */
    incidentHistory: (requestId?: string) => incidentHistory.get(requestId),
    /** `GET /scheduled-maintenances.json`: the 50 most recent maintenances. */
    maintenanceHistory: (requestId?: string) => maintenanceHistory.get(requestId),
    /**
     * A check that `snapshot` is still what the feed serves, fresh, without asking upstream (see
     * `SnapshotCache.currencyOf`); `undefined` when it is not now.
     */
    currencyOf: (snapshot: object) => {
      let check: ((now: number) => boolean) | undefined;
      for (const document of documents) check ??= document.currencyOf(snapshot);
      return check;
    },
    /**
     * Reads a document through its cache as a poller does: when the read starts a refetch, it waits
     * for it (see `SnapshotCache.latest`). Rejects as the document's readers would.
     */
    poll: (document: FeedDocument): Promise<Snapshot<unknown>> => caches[document].latest(),
  };
}

/**
 * A document's name among the replicas' shared snapshots (Redis keys `snapshot:<name>` and the
 * like): the page's slug and the path, so that pages sharing a Redis never overwrite each other.
 * The default page keeps the path alone, the keys of a gateway that served one page.
 */
function sharedName(slug: string, path: string): string {
  return slug === DEFAULT_PAGE_SLUG ? path : `${slug}${path}`;
}

/** A document's diff (see `status-diff.ts`). */
type Diff<Value> = (
  previous: Value,
  next: Value,
  detectedAt: Date,
  others: FeedSnapshots,
) => StatusChangeEvent[];
