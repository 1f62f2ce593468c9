import DataLoader from 'dataloader';
import type { GraphQLError } from 'graphql';
import type { Snapshot } from './upstreams/snapshot-cache.js';
import type {
  Component,
  Incident,
  Maintenance,
  StatusSummary,
  UpcomingMaintenances,
} from './upstreams/status-feed/model.js';
import type { StatusFeed } from './upstreams/status-feed/status-feed.js';
import type { Contract } from './upstreams/verification/model.js';
import type { UpstreamSession } from './upstreams/verification/upstream-session.js';
import type { VerificationService } from './upstreams/verification/verification-service.js';

/** What every resolver of one operation shares. */
export interface GatewayContext {
  /** Identifies the HTTP request in logs, and upstream as `x-request-id`. */
  readonly requestId: string;
  readonly statusFeed: StatusFeedLoaders;
  readonly verification: VerificationService;
  /**
   * Contract lookups of this operation, one upstream lookup per distinct contract (DataLoader's
   * contract: n keys in, n answers out in key order, null for a contract that is not verified).
   */
  readonly contracts: DataLoader<ContractRef, Contract | null, string>;
  /** The calling client's own session at the verification service. */
  readonly verificationSession: UpstreamSession;
  /** Errors to report beside data (see `usePartialErrors`). */
  readonly partialErrors: GraphQLError[];
}

export interface ContractRef {
  readonly chainId: string;
  readonly address: string;
}

export interface ContextSources {
  readonly requestId: string;
  readonly statusFeed: StatusFeed;
  readonly verification: VerificationService;
  readonly verificationSession: UpstreamSession;
}

export function createContext(sources: ContextSources): GatewayContext {
  return {
    requestId: sources.requestId,
    statusFeed: createStatusFeedLoaders(sources.statusFeed, sources.requestId),
    verification: sources.verification,
    contracts: new DataLoader(
      (refs) =>
        Promise.all(
          refs.map((ref) =>
            sources.verification
              .contract(ref.chainId, ref.address, sources.requestId)
              .catch((error: unknown) =>
                error instanceof Error ? error : new Error(String(error)),
              ),
          ),
        ),
      { cacheKeyFn: ({ chainId, address }) => `${chainId}:${address.toLowerCase()}` },
    ),
    verificationSession: sources.verificationSession,
    partialErrors: [],
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

export function createStatusFeedLoaders(feed: StatusFeed, requestId?: string): StatusFeedLoaders {
  const summary = once(() => feed.summary(requestId));
  const upcoming = once(() => feed.upcoming(requestId));

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
