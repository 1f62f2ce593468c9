import type { Logger } from 'pino';
import type { Config, StatusPageConfig } from '../../config.js';
import type { ChangeBus } from '../../core/status/change-bus.js';
import type { StatusChangeEvent } from '../../core/status/change-event.js';
import type {
  DocumentDeclaration,
  FeedDocument,
  FeedDocumentDeclarations,
  FeedSnapshots,
} from '../../core/status/feed-document.js';
import {
  DEFAULT_PAGE_SLUG,
  type FeedDocuments,
  type StatusSummary,
} from '../../core/status/model.js';
import { UpstreamBadResponseError } from '../../errors/upstream-bad-response-error.js';
import type { Tracing } from '../../observability/tracing.js';
import { DEFAULT_PROVIDER, PROVIDERS, providerOf } from '../../providers/providers.js';
import type { RedisSnapshotStore } from '../redis-snapshot-store.js';
import { type Snapshot, SnapshotCache, type SnapshotCacheEvent } from '../snapshot-cache.js';
import {
  createUpstreamClient,
  type UpstreamClientOptions,
  type UpstreamObserver,
} from '../upstream-client.js';
import { UNCHANGED, type Validators } from '../validators.js';
import { createConfiguredComponentsCheck } from './configured-components.js';

/*
 * What a document's snapshot holds in the heap, estimated from the length of the JSON it was built
 * from, measured on the real pages' documents (test/fixtures/real-feeds and real-history, heap
 * after a full collection per snapshot, under the Dockerfile's flags: `bench/page-memory.ts`,
 * docs/performance.md): 1.26 to 2.75 times the upstream's body, 1.73 to 3.74 times the validated
 * JSON another replica stored (without the keys the gateway drops, nor whitespace); the small
 * documents cost the most per byte. Each factor with 10 KiB per document is above every one
 * measured.
 */
const RETAINED_PER_BODY_BYTE = 1.5;
const RETAINED_PER_STORED_BYTE = 2;
const RETAINED_PER_DOCUMENT = 10 * 1024;

/**
 * What a page holds besides its snapshots: four caches, an upstream client (ky's instance and its
 * hooks), a poller, their closures and each document's last failure: 16 KB a page made and not
 * read, 27 KB one whose four documents failed (refused connections), measured over 1,000 pages
 * after a full collection (`bench/page-memory.ts`).
 */
export const PAGE_OVERHEAD_BYTES = 28 * 1024;

export interface StatusFeedOptions
  extends Omit<
    Config['statusFeed'],
    'pollIntervalMs' | 'pages' | 'maxBytes' | 'idleMs' | 'fetchesPerHost'
  > {
  /**
   * The configured page this feed reads: its URL, the slug everything read from it carries, and
   * the chains its summaries are checked against.
   */
  readonly page: Pick<StatusPageConfig, 'slug' | 'baseUrl' | 'versionPattern' | 'provider'> &
    Partial<Pick<StatusPageConfig, 'chains'>>;
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
  readonly sharedSnapshots?: Pick<RedisSnapshotStore, 'document'> | undefined;
  /**
   * Where the changes found between successive loads of a document go (its declaration's `changes`);
   * none are looked for without it.
   */
  readonly changes?: Pick<ChangeBus, 'publish'>;
  /**
   * The most one document's snapshot may hold, as estimated: a larger document is refused as
   * `UPSTREAM_BAD_RESPONSE` (its body as it arrives, when this replica fetches it).
   * @default unbounded (the upstream client's 10 MiB body limit alone)
   */
  readonly maxDocumentBytes?: number;
  /** Told of what the page's snapshots hold, as estimated, each time a document is built. */
  readonly onResize?: (bytes: number) => void;
  /** The upstream client's circuit and request slots, when they outlive the feed (see there). */
  readonly client?: Pick<UpstreamClientOptions, 'circuit' | 'slots'>;
}

export type { FeedDocument };

/**
 * The feed's documents, by the name of the `StatusFeed` method that reads each: those of
 * `FeedDocuments`, which every provider declares (`FeedDocumentDeclarations`), in the order the
 * default provider declares them.
 */
export const FEED_DOCUMENTS = Object.keys(
  PROVIDERS[DEFAULT_PROVIDER].documents,
) as readonly FeedDocument[];

export type StatusFeed = ReturnType<typeof createStatusFeed>;

/** Each document's reader: its snapshot, fetched when it is not fresh (`SnapshotCache.get`). */
type DocumentReaders = {
  readonly [Name in FeedDocument]: (requestId?: string) => Promise<Snapshot<FeedDocuments[Name]>>;
};

type DocumentCaches = { readonly [Name in FeedDocument]: SnapshotCache<FeedDocuments[Name]> };

/** The documents of a page's feed, as its provider declares them, each cached and shared by all requests. */
export function createStatusFeed(options: StatusFeedOptions) {
  const { page, cacheTtlMs, maxStaleMs, upstream, logger, observer, onCacheEvent, tracing } =
    options;
  const { sharedSnapshots, changes, upstreamName, maxDocumentBytes = Infinity, onResize } = options;
  const declarations: FeedDocumentDeclarations = providerOf(page.provider).documents;
  const client = createUpstreamClient({
    ...upstream,
    ...options.client,
    baseUrl: page.baseUrl,
    name: upstreamName,
    logger,
    observer,
    tracing,
  });
  // Another replica's snapshots keep the one before them too (what its change events are checked
  // against): two per document.
  const copies = sharedSnapshots ? 2 : 1;
  const retained = (bytes: number, perByte: number) =>
    copies * (Math.ceil(bytes * perByte) + RETAINED_PER_DOCUMENT);
  /** The longest body a document may have, refused as it arrives past it. */
  const maxBodyBytes = Math.max(
    0,
    Math.floor((maxDocumentBytes / copies - RETAINED_PER_DOCUMENT) / RETAINED_PER_BODY_BYTE),
  );
  /** What each document's snapshot holds, by path, as estimated when it was built. */
  const sizes = new Map<string, number>();
  const bytes = () => {
    let total = PAGE_OVERHEAD_BYTES;
    for (const size of sizes.values()) total += size;
    return total;
  };

  /**
   * One document's cache. A document the page may not serve at all (some Statuspage-compatible
   * hosts answer 404 for all but the summary) keeps its failure for a TTL too, so that asking for it
   * does not cost an upstream request each time.
   */
  function cached<Value, Wire>(
    declaration: DocumentDeclaration<Value, Wire>,
    checkLoaded?: (value: Value) => void,
  ) {
    const { path, schema, optional = false } = declaration;
    const diff = declaration.changes;
    // Logged when the document starts and stops being served stale, not on every read of it.
    let servingStale = false;
    const failureTtlMs = optional ? cacheTtlMs : 0;
    /*
     * The upstream's validators (ETag, Last-Modified) of what this page holds, for the next fetch
     * to ask whether it changed: by built value (a snapshot confirmed unchanged keeps its value,
     * and with it these), and by wire document for the replicas' store, which keeps them in Redis.
     */
    const valueValidators = new WeakMap<object, Validators>();
    const wireValidators = new WeakMap<object, Validators>();
    const fetch = async (requestId?: string, validators?: Validators) => {
      const answer = await client.getSizedJson(path, schema, {
        requestId,
        maxBytes: maxBodyBytes,
        validators,
      });
      if (answer === UNCHANGED) answered();
      return answer;
    };
    /** The feed answered with a usable document: the end of an outage, if there was one. */
    const answered = () => {
      if (servingStale) {
        servingStale = false;
        logger.info({ upstream: upstreamName, path }, 'status feed answers again');
      }
    };
    const buildLogged = (wire: Wire, size: number, validators: Validators | undefined): Value => {
      if (size > maxDocumentBytes) {
        throw new UpstreamBadResponseError(
          { upstream: upstreamName, method: 'GET', path },
          `it would hold about ${size} bytes, more than the ${maxDocumentBytes} one document may (STATUS_PAGES_MAX_BYTES / 16)`,
        );
      }
      const { snapshot, problems } = declaration.build(wire, page);
      // Sized from the body a document was built from: a 304, with none, leaves it as it was.
      sizes.set(path, size);
      onResize?.(bytes());
      if (validators && isObject(snapshot)) valueValidators.set(snapshot, validators);
      answered();
      if (problems.length > 0) {
        logger.warn({ upstream: upstreamName, path, problems }, 'status feed items left out');
      }
      return snapshot;
    };
    return new SnapshotCache<Value>({
      ttlMs: cacheTtlMs,
      maxStaleMs,
      failureTtlMs,
      load: async (requestId, current) => {
        const known = isObject(current?.value) ? valueValidators.get(current.value) : undefined;
        const answer = await fetch(requestId, known);
        if (answer === UNCHANGED) return UNCHANGED;
        const { value, bytes, validators } = answer;
        return buildLogged(value, retained(bytes, RETAINED_PER_BODY_BYTE), validators);
      },
      sharing: sharedSnapshots?.document({
        name: sharedName(page.slug, path),
        upstream: upstreamName,
        fetch: async (requestId, validators) => {
          const answer = await fetch(requestId, validators);
          if (answer === UNCHANGED) return UNCHANGED;
          if (answer.validators && isObject(answer.value)) {
            wireValidators.set(answer.value, answer.validators);
          }
          return answer.value;
        },
        validatorsOf: (wire) => (isObject(wire) ? wireValidators.get(wire) : undefined),
        schema,
        build: (wire, storedBytes) =>
          buildLogged(
            wire,
            retained(storedBytes, RETAINED_PER_STORED_BYTE),
            // What this replica fetched has them (for when Redis goes away); the store keeps the
            // stored documents' own.
            isObject(wire) ? wireValidators.get(wire) : undefined,
          ),
        ttlMs: cacheTtlMs,
        retainMs: maxStaleMs + cacheTtlMs,
        failureTtlMs,
        lockMs: upstream.timeoutMs,
      }),
      onLoaded: (previous, next) => {
        checkLoaded?.(next.value);
        if (changes && diff) findChanges(previous, next);
      },
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

    function findChanges(previous: Snapshot<Value> | undefined, next: Snapshot<Value>): void {
      if (!diff || !changes) return;
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
    }
  }

  // Each summary fetched is checked against the chains the page maps: the configuration against
  // what the page says, from its first fetch on.
  const checkChains = createConfiguredComponentsCheck(page, logger, upstreamName);
  const caches = Object.fromEntries(
    FEED_DOCUMENTS.map((name) => [
      name,
      cached<unknown, unknown>(
        declarations[name],
        name === 'summary' ? (value) => checkChains(value as StatusSummary) : undefined,
      ),
    ]),
  ) as unknown as DocumentCaches;
  const documents = Object.values(caches) as SnapshotCache<unknown>[];
  const readers = Object.fromEntries(
    FEED_DOCUMENTS.map((name) => [name, (requestId?: string) => caches[name].get(requestId)]),
  ) as unknown as DocumentReaders;
  /** Each document as it stands, without fetching: what one document's diff checks against. */
  const snapshots = (): FeedSnapshots =>
    Object.fromEntries(FEED_DOCUMENTS.map((name) => [name, caches[name].current?.value]));

  return {
    /** What errors, logs and metrics call this feed. */
    name: upstreamName,
    /** Where document `name` is read from, below the page's `baseUrl`: what errors about it name. */
    pathOf: (name: FeedDocument): string => declarations[name].path,
    /** Each document by its name (`summary`, `incidentHistory`…; see `FeedDocuments`). */
    ...readers,
    /** The last good summary, fresh or not, without fetching: what a reader that cannot wait shows. */
    lastSummary: () => caches.summary.current,
    /** When the summary's fetch under way started (epoch ms), if one is. */
    summaryRefreshingSince: () => caches.summary.refreshingSince,
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
    /**
     * Fetches again now every document held here or by the replicas (`SnapshotCache.refetch`): the
     * page said it changed. A document nobody read has nobody to tell.
     */
    refetch: async (): Promise<void> => {
      await Promise.all(documents.map((document) => document.refetch()));
    },
    /** What the page's snapshots and the feed itself hold, as estimated. */
    get bytes(): number {
      return bytes();
    },
    /**
     * Lets go of every snapshot and stops sharing them (see `SnapshotCache.close`): reads already
     * holding the feed still answer, each fetching for itself.
     */
    close: () => {
      for (const document of documents) document.close();
      sizes.clear();
    },
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

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;
