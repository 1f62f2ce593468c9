import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayMetrics } from '../metrics/metrics.js';
import { type RequestScope, runInRequestScope } from '../observability/request-scope.js';
import { CacheabilityRecord } from '../schema/plugins/cacheability.js';
import type { Answers } from './answers.js';
import { askYoga, type GatewayYoga } from './gateway-yoga.js';
import { isCacheableAnswer, isCompleteJson } from './response-cache/cacheability.js';
import { requestKey } from './response-cache/request-key.js';
import type { CachedResponse, ResponseCache } from './response-cache/store.js';

export interface CachedGraphQLOptions {
  readonly yoga: GatewayYoga;
  readonly store: ResponseCache;
  /** How an answer knows its snapshots are still current (`StatusFeed.currencyOf`). */
  readonly currencyOf: (snapshots: readonly object[]) => ((now: number) => boolean) | undefined;
  readonly metrics: GatewayMetrics;
  /** How every answer goes out, a hit's included. */
  readonly answers: Answers;
  /**
   * The status feed's snapshot lifetimes (`STATUS_CACHE_TTL_MS`, `STATUS_MAX_STALE_MS`), which a
   * kept answer's `Cache-Control` passes on to browsers and CDNs.
   */
  readonly freshness: { readonly ttlMs: number; readonly maxStaleMs: number };
}

/** What an answer built from a stand-in snapshot says to browsers and CDNs, as Yoga's would. */
const NO_STORE = 'no-store';

/**
 * GraphQL requests answered through the response cache (`routes.ts` says which: GETs and small
 * JSON POSTs to the GraphQL endpoint). A request whose exact URL or body (with `Accept`) was
 * answered before, with an answer `isCacheableAnswer` allowed and whose snapshots are all still
 * current, is answered from the store (a hit): the same bytes in the coding the client accepts,
 * with an ETag (304 when the client has it), a `Cache-Control` passing on the snapshots' remaining
 * freshness, its own request id, log line and metrics. Every miss goes through Yoga in full
 * (limits, CSRF, error masking, cookies), and its answer is kept when it may be; an answer that is
 * not one complete JSON document is streamed through, never buffered.
 */
export function createCachedGraphQL(options: CachedGraphQLOptions) {
  const { yoga, store, currencyOf, metrics, answers, freshness } = options;
  const endpoint = yoga.graphqlEndpoint;
  // What the gateway itself does once an answer's snapshots are past their TTL: serves them while
  // it refetches, and while the feed fails, up to STATUS_MAX_STALE_MS after their fetch.
  const staleSeconds = Math.floor((freshness.maxStaleMs - freshness.ttlMs) / 1000);
  const staleDirectives =
    staleSeconds > 0
      ? `, stale-while-revalidate=${staleSeconds}, stale-if-error=${staleSeconds}`
      : '';
  // A snapshot's fetch time comes from whichever replica fetched it (through Redis): whatever it
  // says, no answer is cached downstream for longer than a snapshot is fresh here.
  const ttlSeconds = Math.floor(freshness.ttlMs / 1000);
  /** The entry's `Cache-Control` at `now`: its value changes once a second at most. */
  const cacheControlOf = ({ freshUntil, cacheControl, stale }: CachedResponse, now: number) => {
    if (stale) return NO_STORE;
    const maxAge = Math.min(ttlSeconds, Math.max(0, Math.floor((freshUntil - now) / 1000)));
    if (cacheControl.maxAge !== maxAge) {
      cacheControl.maxAge = maxAge;
      cacheControl.value = `public, max-age=${maxAge}${staleDirectives}`;
    }
    return cacheControl.value;
  };
  /**
   * Answers being rebuilt, by key: the entry kept, or `undefined` when it was not. A request whose
   * answer is being rebuilt waits for it instead of running the pipeline too, so that when a
   * refetch lands, the next requests of every client make one rebuild, not one each at once. Only
   * keys with an answer kept before are rebuilt this way: a request never kept (a mutation, an
   * answer for a session) never waits for another.
   */
  const building = new Map<string, Promise<CachedResponse | undefined>>();

  /** The key of `req`'s answer: of its URL, or of `body`, a POST's. */
  const keyOf = (req: IncomingMessage, body: Buffer | undefined) =>
    body === undefined
      ? requestKey('GET', req.headers.accept ?? '', req.url as string)
      : requestKey('POST', req.headers.accept ?? '', body);

  function respond(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    key: string,
    body: Buffer | undefined,
  ): void {
    const now = Date.now();
    const cached = store.lookup(key, now);
    if (cached) {
      serve(req, res, scope, cached, now);
      return;
    }
    const underWay = building.get(key);
    if (underWay) {
      void underWay.then((built) => {
        const later = Date.now();
        if (res.destroyed) return;
        if (built?.current(later)) serve(req, res, scope, built, later);
        else runMiss(req, res, scope, key, body, false);
      });
      return;
    }
    runMiss(req, res, scope, key, body, store.previous(key) !== undefined);
  }

  /** Sends a kept answer: a hit. */
  function serve(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    cached: CachedResponse,
    now: number,
  ): void {
    answers.kept(req, res, scope, cached.answer, cacheControlOf(cached, now), cached, now);
  }

  /**
   * Runs the pipeline for a request no kept answer serves; with `rebuild`, the requests for the
   * same key that come meanwhile wait for its answer (`building`).
   */
  function runMiss(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    key: string,
    body: Buffer | undefined,
    rebuild: boolean,
  ): void {
    // The socket's events run outside the request's scope: a miss is put back in it.
    const answered = runInRequestScope(scope, () =>
      miss(req, res, scope, key, body).catch((error: unknown) => {
        answers.failed(req, res, scope, error);
        return undefined;
      }),
    );
    if (!rebuild) return;
    building.set(key, answered);
    void answered.finally(() => {
      if (building.get(key) === answered) building.delete(key);
    });
  }

  /** The pipeline's answer, sent; resolves with the entry kept, if it was. */
  async function miss(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    key: string,
    body: Buffer | undefined,
  ): Promise<CachedResponse | undefined> {
    const record = new CacheabilityRecord();
    const response = await askYoga(yoga, req, res, body, { cacheability: record });
    const contentType = response.headers.get('content-type');
    if (!isCompleteJson(contentType)) {
      metrics.responseCacheRead('miss');
      await answers.fetched(req, res, scope, response);
      return undefined;
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    const current = isCacheableAnswer(record, response, bytes)
      ? currencyOf(record.snapshots)
      : undefined;
    if (!current) {
      metrics.responseCacheRead('miss');
      await answers.fetched(req, res, scope, response, bytes);
      return undefined;
    }
    const operation = scope.operation;
    const entry: CachedResponse = {
      answer: await store.encode(key, bytes, contentType as string, answers.vary),
      current,
      freshUntil: record.oldestFetch + freshness.ttlMs,
      stale: record.stale,
      cacheControl: { maxAge: -1, value: '' },
      operation,
      operationField: operation ? `,"operation":${JSON.stringify(operation)}` : '',
      countHit: metrics.cacheHit(operation, endpoint),
    };
    store.keep(key, entry);
    metrics.responseCacheRead('stored');
    answers.kept(req, res, scope, entry.answer, cacheControlOf(entry, Date.now()));
    return entry;
  }

  return {
    /** Answers a GET: a hit, or Yoga's answer, kept when it may be. */
    get(req: IncomingMessage, res: ServerResponse, scope: RequestScope): void {
      respond(req, res, scope, keyOf(req, undefined), undefined);
    },

    /** Answers a POST whose body `readBody` read, as `get`. */
    post(req: IncomingMessage, res: ServerResponse, scope: RequestScope, body: Buffer): void {
      respond(req, res, scope, keyOf(req, body), body);
    },

    /**
     * Runs a request through Yoga on its own, waiting for no one's rebuild (an event stream the
     * hub cannot share), its answer kept when it may be.
     */
    alone(req: IncomingMessage, res: ServerResponse, scope: RequestScope, body?: Buffer): void {
      runMiss(req, res, scope, keyOf(req, body), body, false);
    },
  };
}

export type CachedGraphQL = ReturnType<typeof createCachedGraphQL>;
