import DataLoader from 'dataloader';
import type { GraphQLError } from 'graphql';
import type { CacheabilityRecord } from '../http/response-cache/cacheability.js';
import type { Snapshot } from '../upstreams/snapshot-cache.js';
import type {
  Component,
  Incident,
  Maintenance,
  StatusSummary,
  UpcomingMaintenances,
} from '../upstreams/status-feed/model.js';
import type { StatusFeed } from '../upstreams/status-feed/status-feed.js';
import type { Contract } from '../upstreams/verification/model.js';
import type { UpstreamSession } from '../upstreams/verification/upstream-session.js';
import type { VerificationService } from '../upstreams/verification/verification-service.js';

/** A contract as a lookup key: where it is deployed. */
export interface ContractLocation {
  readonly chainId: string;
  readonly address: string;
}

/** What every resolver of one operation shares. */
export interface GatewayContext {
  /** Identifies the HTTP request in logs, and upstream as `x-request-id`. */
  readonly requestId: string;
  readonly statusFeed: StatusFeedLoaders;
  readonly verification: VerificationService;
  /**
   * Contract lookups of this operation, one upstream lookup per distinct contract (a DataLoader:
   * n keys in, n answers out in key order, null for a contract that is not verified).
   */
  readonly contracts: Pick<DataLoader<ContractLocation, Contract | null, string>, 'load'>;
  /** The calling client's own session at the verification service. */
  readonly verificationSession: UpstreamSession;
  /** Errors to report beside data (see `usePartialErrors`). */
  readonly partialErrors: GraphQLError[];
  /** What the answer is built from, when the response cache may keep it (see `cacheability.ts`). */
  readonly cacheability: CacheabilityRecord | undefined;
}

export interface ContextSources {
  readonly requestId: string;
  readonly statusFeed: StatusFeed;
  readonly verification: VerificationService;
  readonly verificationSession: UpstreamSession;
  readonly cacheability: CacheabilityRecord | undefined;
}

export function createContext(sources: ContextSources): GatewayContext {
  const { requestId, verification, cacheability } = sources;
  const contracts = new DataLoader<ContractLocation, Contract | null, string>(
    (locations) =>
      Promise.all(
        locations.map((location) =>
          verification
            .contract(location.chainId, location.address, requestId)
            .catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))),
        ),
      ),
    { cacheKeyFn: ({ chainId, address }) => `${chainId}:${address.toLowerCase()}` },
  );
  return {
    requestId,
    statusFeed: createStatusFeedLoaders(sources.statusFeed, requestId, cacheability),
    partialErrors: [],
    cacheability,
    verificationSession: sources.verificationSession,
    contracts: {
      load: (location) => {
        // The verification service is not a status snapshot: an answer that looked a contract up
        // (as `_entities` does, whatever it selects) is never cached.
        cacheability?.markUncacheable('a contract lookup');
        return contracts.load(location);
      },
    },
    verification,
  };
}

/**
 * The status feed as one operation sees it. Each document is read at most once per operation, so
 * all of its fields answer from the same snapshot, and lookups by id are batched.
 *
 * The id loaders keep DataLoader's contract: for n keys they return n values in key order, `null`
 * for an id the feed does not have.
 */
export interface StatusFeedLoaders {
  summary(): Promise<Snapshot<StatusSummary>>;
  upcoming(): Promise<Snapshot<UpcomingMaintenances>>;
  readonly component: DataLoader<string, Component | null>;
  readonly incident: DataLoader<string, Incident | null>;
  /** Looks in the summary first, then in the upcoming list for ids the summary lacks. */
  readonly maintenance: DataLoader<string, Maintenance | null>;
}

export function createStatusFeedLoaders(
  feed: StatusFeed,
  requestId?: string,
  cacheability?: CacheabilityRecord,
): StatusFeedLoaders {
  const record = <Value extends Snapshot<unknown>>(snapshot: Value) => {
    cacheability?.snapshotRead(snapshot);
    return snapshot;
  };
  const summary = once(() => feed.summary(requestId).then(record));
  const upcoming = once(() => feed.upcoming(requestId).then(record));

  return {
    summary,
    upcoming,
    component: new DataLoader(async (ids) => {
      const { value } = await summary();
      return ids.map((id) => value.componentsById.get(id) ?? null);
    }),
    incident: new DataLoader(async (ids) => {
      const { value } = await summary();
      return ids.map((id) => value.incidentsById.get(id) ?? null);
    }),
    maintenance: new DataLoader(async (ids) => {
      const { value } = await summary();
      const found = ids.map((id) => value.maintenancesById.get(id) ?? null);
      if (found.every((maintenance) => maintenance !== null)) return found;
      const later = (await upcoming()).value;
      return found.map(
        (maintenance, i) => maintenance ?? later.maintenancesById.get(ids[i] ?? '') ?? null,
      );
    }),
  };
}

/** Calls `load` on first use only; later calls get the same promise. */
function once<Value>(load: () => Promise<Value>): () => Promise<Value> {
  let promise: Promise<Value> | undefined;
  return () => {
    promise ??= load();
    return promise;
  };
}
