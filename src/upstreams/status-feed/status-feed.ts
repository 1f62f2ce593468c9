import type { Logger } from 'pino';
import { type Snapshot, SnapshotCache } from '../snapshot-cache.js';
import { createUpstreamClient, type UpstreamClientOptions } from '../upstream-client.js';
import type { StatusSummary, UpcomingMaintenances } from './model.js';
import { type Built, buildSummary, buildUpcoming } from './snapshot.js';
import { WireSummary, WireUpcoming } from './wire.js';

export interface StatusFeedOptions extends Omit<UpstreamClientOptions, 'name' | 'logger'> {
  /** How long a fetched document is served to every request before it is fetched again. */
  readonly cacheTtlMs: number;
  /** How long after its fetch a document stands in while the feed fails. */
  readonly maxStaleMs: number;
  readonly logger: Logger;
}

/** The two documents of a Statuspage v2 feed, cached and shared by all requests. */
export interface StatusFeed {
  /** `GET /summary.json`: page, indicator, components, unresolved incidents, maintenances. */
  summary(): Promise<Snapshot<StatusSummary>>;
  /** `GET /scheduled-maintenances/upcoming.json`. */
  upcoming(): Promise<Snapshot<UpcomingMaintenances>>;
}

export function createStatusFeed(options: StatusFeedOptions): StatusFeed {
  const { cacheTtlMs, maxStaleMs, logger, ...clientOptions } = options;
  const client = createUpstreamClient({ ...clientOptions, name: 'status feed', logger });

  function cached<Value>(path: string, fetchAndBuild: () => Promise<Built<Value>>) {
    return new SnapshotCache<Value>({
      ttlMs: cacheTtlMs,
      maxStaleMs,
      load: async () => {
        const { snapshot, problems } = await fetchAndBuild();
        if (problems.length > 0) {
          logger.warn({ upstream: 'status feed', path, problems }, 'status feed items left out');
        }
        return snapshot;
      },
      onEvent: (event, error) => {
        if (event === 'stale') {
          logger.warn(
            { upstream: 'status feed', path, err: error },
            'status feed failed; serving the last good snapshot',
          );
        }
      },
    });
  }

  const summary = cached('/summary.json', async () =>
    buildSummary(await client.getJson('/summary.json', WireSummary)),
  );
  const upcoming = cached('/scheduled-maintenances/upcoming.json', async () =>
    buildUpcoming(await client.getJson('/scheduled-maintenances/upcoming.json', WireUpcoming)),
  );

  return {
    summary: () => summary.get(),
    upcoming: () => upcoming.get(),
  };
}
