import DataLoader from 'dataloader';
import { GraphQLError, type GraphQLResolveInfo, responsePathAsArray } from 'graphql';
import type { Path } from 'graphql/jsutils/Path.js';
import type { Component, Incident, Maintenance, StatusSummary } from '../core/status/model.js';
import { UpstreamError } from '../errors/upstream-error.js';
import { UpstreamUnavailableError } from '../errors/upstream-unavailable-error.js';
import type { Subscriber } from '../subscriptions/admission.js';
import type { HubItem, SubscriptionHub, SubscriptionRequest, Topic } from '../subscriptions/hub.js';
import type { Snapshot } from '../upstreams/snapshot-cache.js';
import type { StatusFeed } from '../upstreams/status-feed/status-feed.js';
import type { StatusPages } from '../upstreams/status-feed/status-pages.js';
import type { ClientQuota } from '../upstreams/verification/client-quota.js';
import type { Contract } from '../upstreams/verification/model.js';
import type { UpstreamSession } from '../upstreams/verification/upstream-session.js';
import type {
  ContractLocation,
  VerificationService,
} from '../upstreams/verification/verification-service.js';
import type { CacheabilityRecord } from './plugins/cacheability.js';
import { pageBudgetExceeded } from './plugins/page-budget.js';

/** What every resolver of one operation shares. */
export interface GatewayContext {
  /** Identifies the HTTP request in logs, and upstream as `x-request-id`. */
  readonly requestId: string;
  /** Representations one `_entities` call may resolve (`MAX_ENTITY_REPRESENTATIONS`). */
  readonly maxEntityRepresentations: number;
  /** The configured status pages as this operation reads them. */
  readonly statusPages: StatusPagesLoaders;
  readonly verification: VerificationService;
  /** Contract lookups of this operation, one per distinct contract; null for one not verified. */
  readonly contracts: Pick<DataLoader<ContractLocation, Contract | null, string>, 'load'>;
  /** The calling client's own session at the verification service. */
  readonly verificationSession: UpstreamSession;
  /** Where the request comes from (see `clientAddressOf`): whose share of a budget it spends. */
  readonly clientAddress: string;
  /** Takes one verification from the calling client's allowance, or fails with `RateLimitedError`. */
  takeVerification(): void | Promise<void>;
  /** Errors to report beside data (see `usePartialErrors`). */
  readonly partialErrors: GraphQLError[];
  /** What the answer is built from, when the response cache may keep it (see `cacheability.ts`). */
  readonly cacheability: CacheabilityRecord | undefined;
  /**
   * Opens this operation's subscription (see `SubscriptionHub`): its topic's source, or one of its
   * own. Each item is resolved with fresh `statusPages` loaders: it reads the pages as they are
   * when it is sent. `info` tells how the operation gives its `since`, if it takes one.
   */
  openSubscription(
    request: Omit<SubscriptionRequest, 'since' | 'beforeEach'>,
    since?: { readonly at: Date | null | undefined; readonly info: GraphQLResolveInfo },
  ): AsyncIterableIterator<HubItem>;
}

/** The configured pages, and each one's documents as one operation reads them. */
export interface StatusPagesLoaders {
  /** The configuration: slugs, order, chains. */
  readonly registry: Pick<
    StatusPages,
    'configs' | 'defaultSlug' | 'has' | 'config' | 'chain' | 'position' | 'tagged'
  >;
  /** How long a list or an overview waits for any one page (`STATUS_OVERVIEW_DEADLINE_MS`). */
  readonly deadlineMs: number;
  /**
   * Page `slug`'s loaders (the default page's without one), made once per operation and page;
   * `BAD_USER_INPUT` for a slug nobody configured.
   */
  of(slug?: string): StatusFeedLoaders;
}

export interface ContextSources {
  readonly requestId: string;
  readonly statusPages: StatusPagesLoaders['registry'] & Pick<StatusPages, 'get'>;
  readonly verification: VerificationService;
  readonly verificationSession: UpstreamSession;
  readonly cacheability: CacheabilityRecord | undefined;
  readonly maxEntityRepresentations: number;
  /** Pages one operation may read (`MAX_PAGES_PER_OPERATION`). */
  readonly maxPagesPerOperation: number;
  /** How long a list or an overview waits for any one page (`STATUS_OVERVIEW_DEADLINE_MS`). */
  readonly overviewDeadlineMs: number;
  /** Where the request comes from (see `clientAddressOf`). */
  readonly clientAddress: string;
  readonly clientQuota: ClientQuota;
  /**
   * Verifications taken from the client's allowance for this request before it was parsed (a large
   * upload's, see `useBodyLimit`): the first resolvers to verify spend these instead.
   */
  readonly verificationsTaken?: number;
  readonly subscriptions: Pick<SubscriptionHub, 'open'>;
  /** The topic whose source this operation is, if it is one (see `SubscriptionHub`). */
  readonly topic: Topic | undefined;
  /** Otherwise who subscribes, for the limits, log lines and metrics, and its request's end. */
  readonly subscriber: Omit<Subscriber, 'requestId'> & { readonly signal?: AbortSignal };
}

export function createContext(sources: ContextSources): GatewayContext {
  const { requestId, verification, cacheability } = sources;
  // One batch per turn of the event loop; the service bounds how many lookups are in flight.
  const contracts = new DataLoader<ContractLocation, Contract | null, string>(
    (locations) => verification.contracts(locations, requestId),
    { cacheKeyFn: ({ chainId, address }) => `${chainId}:${address.toLowerCase()}` },
  );
  const registry = sources.statusPages;
  let loaders = new Map<string, StatusFeedLoaders>();
  let record = cacheability;
  let taken = sources.verificationsTaken ?? 0;
  return {
    requestId,
    maxEntityRepresentations: sources.maxEntityRepresentations,
    // Yoga copies the context's properties into its own object: this one stays, and reads the
    // loaders of the moment.
    statusPages: {
      registry,
      deadlineMs: sources.overviewDeadlineMs,
      of: (slug = registry.defaultSlug) => {
        let page = loaders.get(slug);
        if (!page) {
          // Counted before the operation ran (`usePageBudget`); this holds for a read that no
          // field's `readsPages` foresaw.
          const max = sources.maxPagesPerOperation;
          if (loaders.size >= max) throw pageBudgetExceeded(loaders.size + 1, max);
          page = createStatusFeedLoaders(registry.get(slug).feed, requestId, record);
          loaders.set(slug, page);
        }
        return page;
      },
    },
    openSubscription: (request, since) =>
      sources.subscriptions.open(
        {
          ...request,
          since: since && {
            at: since.at?.getTime(),
            variable: sinceVariableOf(since.info),
          },
          beforeEach: () => {
            // Not recorded for the response cache: a subscription's answer is a stream, never kept.
            record = undefined;
            loaders = new Map();
          },
        },
        sources.topic
          ? { topic: sources.topic }
          : {
              subscriber: { ...sources.subscriber, requestId },
              signal: sources.subscriber.signal,
            },
      ),
    partialErrors: [],
    cacheability,
    verificationSession: sources.verificationSession,
    clientAddress: sources.clientAddress,
    takeVerification: () => {
      if (taken > 0) {
        taken -= 1;
        return;
      }
      return sources.clientQuota.take(sources.clientAddress);
    },
    contracts: {
      load: (location) => {
        // The verification service is not a status snapshot: an answer that looked a contract up
        // (as `_entities` does, whatever it selects) is never cached.
        cacheability?.markUncacheable();
        return contracts.load(location);
      },
    },
    verification,
  };
}

/** The variable the operation gives the field's `since` in, if it gives it in one. */
function sinceVariableOf(info: GraphQLResolveInfo): string | undefined {
  const since = info.fieldNodes[0]?.arguments?.find((argument) => argument.name.value === 'since');
  return since?.value.kind === 'Variable' ? since.value.name.value : undefined;
}

/**
 * A `catch` handler that reports an upstream failure as an error beside the data at `path`, so
 * that the field answers without what failed; anything else is thrown.
 */
export function reportedBeside(
  context: Pick<GatewayContext, 'partialErrors'>,
  path: Path,
  extensions?: Record<string, unknown>,
) {
  return (error: unknown): undefined => {
    if (!(error instanceof UpstreamError)) throw error;
    context.partialErrors.push(
      new GraphQLError(error.message, {
        path: responsePathAsArray(path),
        extensions: { ...error.extensions, ...extensions },
      }),
    );
    return undefined;
  };
}

/**
 * The status feed as one operation sees it. Each document is read at most once per operation, so
 * all of its fields answer from the same snapshot, and lookups by id are batched (`null` for an id
 * the feed does not have).
 */
export type StatusFeedLoaders = ReturnType<typeof createStatusFeedLoaders>;

function createStatusFeedLoaders(
  feed: StatusFeed,
  requestId: string,
  cacheability: CacheabilityRecord | undefined,
) {
  const record = <Value extends Snapshot<unknown>>(snapshot: Value) => {
    cacheability?.snapshotRead(snapshot);
    return snapshot;
  };
  let summaryRead: Promise<Snapshot<StatusSummary>> | undefined;
  const summary = () => (summaryRead ??= feed.summary(requestId).then(record));
  /**
   * The summary as a list of pages reads it, waiting at most `deadlineMs`: past it, the last good
   * summary marked stale, or, with none, an `UpstreamUnavailableError`. The read goes on for the
   * next reader; the page's other fields answer from what this gave. An answer built from it is
   * never cached: it lacks what the page would have said.
   */
  const summaryWithin = (deadlineMs: number) => {
    const lastKnown = () => {
      cacheability?.markUncacheable();
      const last = feed.lastSummary();
      if (last) return { ...last, stale: true };
      throw new UpstreamUnavailableError(
        { upstream: feed.name, method: 'GET', path: feed.pathOf('summary') },
        `no answer within ${deadlineMs} ms`,
      );
    };
    // A fetch under way for longer than the deadline has missed it already: no reader waits for it
    // again (a page that never answers costs its timeout in the background, not in answers).
    const overdue = () => {
      const since = feed.summaryRefreshingSince();
      return since !== undefined && Date.now() - since > deadlineMs;
    };
    const read = overdue() ? Promise.resolve().then(lastKnown) : summary();
    summaryRead = within(read, deadlineMs, lastKnown).then((snapshot) =>
      // Served while it is refetched: past the deadline, the refetch has not answered in time.
      overdue() ? lastKnown() : snapshot,
    );
    return summaryRead;
  };
  const upcoming = once(() => feed.upcoming(requestId).then(record));
  const incidentHistory = once(() => feed.incidentHistory(requestId).then(record));
  const maintenanceHistory = once(() => feed.maintenanceHistory(requestId).then(record));

  return {
    /** What errors call the page's feed. */
    name: feed.name,
    /** Where each document is read from: what errors about it name. */
    pathOf: feed.pathOf,
    summary,
    summaryWithin,
    upcoming,
    incidentHistory,
    maintenanceHistory,
    component: new DataLoader<string, Component | null>(async (ids) => {
      const { value } = await summary();
      return ids.map((id) => value.componentsById.get(id) ?? null);
    }),
    /** Looks in the summary first, then in the incident history for ids the summary lacks. */
    incident: new DataLoader<string, Incident | null>(async (ids) => {
      const { value } = await summary();
      return lookUp(
        ids.map((id) => value.incidentsById.get(id) ?? null),
        ids,
        [async () => (await incidentHistory()).value.eventsById],
      );
    }),
    /** Looks in the summary first, then in the upcoming list, then in the maintenance history. */
    maintenance: new DataLoader<string, Maintenance | null>(async (ids) => {
      const { value } = await summary();
      return lookUp(
        ids.map((id) => value.maintenancesById.get(id) ?? null),
        ids,
        [
          async () => (await upcoming()).value.maintenancesById,
          async () => (await maintenanceHistory()).value.eventsById,
        ],
      );
    }),
  };
}

/**
 * Fills in what the summary did not have from the next documents, in order, reading each only
 * while ids are missing. An id none of them has is null, unless a document that might have had
 * it failed: then that failure is its answer, not a misleading "no such id".
 */
async function lookUp<Value>(
  found: (Value | null)[],
  ids: readonly string[],
  documents: readonly (() => Promise<ReadonlyMap<string, Value>>)[],
): Promise<(Value | Error | null)[]> {
  let failure: Error | undefined;
  for (const document of documents) {
    if (found.every((value) => value !== null)) return found;
    try {
      const byId = await document();
      found = found.map((value, i) => value ?? byId.get(ids[i] ?? '') ?? null);
    } catch (error) {
      failure ??= error instanceof Error ? error : new Error(String(error));
    }
  }
  return found.map((value) => value ?? failure ?? null);
}

/**
 * `read`, or what `fallback` makes of it when it has not settled within `ms`; a read that settles
 * later is left to whoever reads it next (its failure is handled there).
 */
function within<Value>(read: Promise<Value>, ms: number, fallback: () => Value): Promise<Value> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Value>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(fallback());
      } catch (error) {
        reject(error);
      }
    }, ms);
  });
  read.catch(() => {});
  return Promise.race([read, late]).finally(() => clearTimeout(timer));
}

/** Calls `load` on first use only; later calls get the same promise. */
function once<Value>(load: () => Promise<Value>): () => Promise<Value> {
  let promise: Promise<Value> | undefined;
  return () => (promise ??= load());
}
