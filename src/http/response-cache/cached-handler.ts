import { hash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayMetrics } from '../../metrics/metrics.js';
import { type RequestScope, runInRequestScope } from '../../observability/request-scope.js';
import { CacheabilityRecord } from '../../schema/plugins/cacheability.js';
import type { Answers } from '../answers.js';
import { answerHash, type EncodedAnswer, encodeAnswer } from '../encoded-answer.js';
import type { EventStreams } from '../event-streams.js';
import { askYoga, type GatewayYoga } from '../gateway-yoga.js';
import type { GraphiQLPage } from '../graphiql-page.js';
import { isCacheableAnswer, isCompleteJson } from './cacheability.js';
import type { CachedResponse, ResponseCache } from './store.js';

export interface CachedHandlerOptions {
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
  /** GraphiQL's page, served from memory; `undefined` when GraphiQL is off. */
  readonly graphiql: GraphiQLPage | undefined;
  /** Subscriptions over SSE: sinks of the subscription hub. */
  readonly eventStreams: EventStreams;
}

/** What an answer built from a stand-in snapshot says to browsers and CDNs, as Yoga's would. */
const NO_STORE = 'no-store';

/** Bodies above this go straight to Yoga: cacheable operations are small. */
const LARGEST_CACHED_REQUEST = 16 * 1024;

/**
 * The response cache in front of Yoga, for GETs and JSON POSTs to the GraphQL endpoint. A request
 * whose exact URL or body (with `Accept`) was answered before, with an answer `isCacheableAnswer`
 * allowed and whose snapshots are all still current, is answered from memory (a hit): the same
 * bytes in the coding the client accepts, with an ETag (304 when the client has it), a
 * `Cache-Control` passing on the snapshots' remaining freshness, its own request id, log line and
 * metrics. Every miss goes through Yoga in full (limits, CSRF, error masking, cookies); an answer
 * that is not one complete JSON document is streamed through, never buffered.
 */
export function createCachedHandler(options: CachedHandlerOptions) {
  const { yoga, store, currencyOf, metrics, answers, freshness, graphiql, eventStreams } = options;
  const endpoint = yoga.graphqlEndpoint;
  const queryUrl = `${endpoint}?`;
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
  /** Codings under way, by content type and hash: concurrent rebuilds compress an answer once. */
  const encoding = new Map<string, Promise<EncodedAnswer>>();
  /**
   * Answers being rebuilt, by key: the entry kept, or `undefined` when it was not. A request whose
   * answer is being rebuilt waits for it instead of running the pipeline too, so that when a
   * refetch lands, the next requests of every client make one rebuild, not one each at once. Only
   * keys with an answer kept before are rebuilt this way: a request never kept (a mutation, an
   * answer for a session) never waits for another.
   */
  const building = new Map<string, Promise<CachedResponse | undefined>>();

  /** Whether the front door answers this request here; everything else goes to Yoga. */
  function accepts(req: IncomingMessage): boolean {
    const { method, url = '' } = req;
    if (method === 'GET') {
      if (url !== endpoint && !url.startsWith(queryUrl)) return false;
      return graphiql !== undefined || !req.headers.accept?.includes('text/html');
    }
    const length = Number(req.headers['content-length']);
    return (
      method === 'POST' &&
      url === endpoint &&
      /^application\/json\b/i.test(req.headers['content-type'] ?? '') &&
      length > 0 &&
      length <= LARGEST_CACHED_REQUEST
    );
  }

  /** Answers a request `accepts` took; `scope` is the one the front door opened for it. */
  function handle(req: IncomingMessage, res: ServerResponse, scope: RequestScope): void {
    const accept = req.headers.accept ?? '';
    if (req.method === 'GET') {
      if (graphiql?.asksForPage(req)) graphiql.serve(req, res, scope);
      else respond(req, res, scope, requestKey('GET', accept, req.url as string), undefined);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A request aborted mid-body never ends: its client is gone. node:http emits the error only
    // when someone listens; once the body is complete, whoever answers records a client gone.
    req.on('error', () => {
      if (!req.complete) answers.gone(req, scope);
    });
    req.on('end', () => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      respond(req, res, scope, requestKey('POST', accept, body), body);
    });
  }

  function respond(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    key: string,
    body: Buffer | undefined,
  ): void {
    if (eventStreams.accepts(req)) {
      eventStreams.serve(req, res, scope, body, () => runMiss(req, res, scope, key, body, false));
      return;
    }
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
      answer: await encodeOnce(key, bytes, contentType as string),
      current,
      freshUntil: record.oldestFetch + freshness.ttlMs,
      stale: record.stale,
      cacheControl: { maxAge: -1, value: '' },
      operation,
      operationField: operation ? `,"operation":${JSON.stringify(operation)}` : '',
      countHit: metrics.cacheHit(operation, endpoint),
    };
    store.store(key, entry);
    metrics.responseCacheRead('stored');
    answers.kept(req, res, scope, entry.answer, cacheControlOf(entry, Date.now()));
    return entry;
  }

  /**
   * The answer's codings: those of the answer kept before under the same key when the bytes are
   * the same (the feed was refetched and nothing changed: same ETag, nothing to compress), else
   * made now, once however many requests rebuild it at the same time.
   */
  function encodeOnce(key: string, bytes: Buffer, contentType: string): Promise<EncodedAnswer> {
    const hash = answerHash(bytes);
    const previous = store.previous(key)?.answer;
    if (previous?.hash === hash && previous.contentType === contentType) {
      return Promise.resolve(previous);
    }
    const underWay = `${contentType} ${hash}`;
    let pending = encoding.get(underWay);
    if (!pending) {
      pending = encodeAnswer(bytes, contentType, answers.vary, hash).finally(() =>
        encoding.delete(underWay),
      );
      encoding.set(underWay, pending);
    }
    return pending;
  }

  return { accepts, handle };
}

export type CachedHandler = ReturnType<typeof createCachedHandler>;

/**
 * A request's URL or body up to this size is its own key; a longer one is keyed by its SHA-256.
 * V8 hashes a string key at about 1.5 ns a character, for every request, since each brings a new
 * string, while SHA-256 costs a fixed 2,700 instructions or so (OpenSSL's set-up, the digest's
 * base64) before it reads a byte: 0.8 µs for the 934-byte page-tree body against 1.7 µs for the
 * body itself, 3 µs for 4.8 KB of `_entities` against 7.6 µs, but more than the tiny query's
 * 56-byte body costs as it is (callgrind, docs/performance.md).
 */
const LARGEST_LITERAL_KEY = 256;

/**
 * The key of a request's answer: its method, its `Accept` header and its URL (GET) or body (POST),
 * or their SHA-256 when longer than `LARGEST_LITERAL_KEY` (a collision is out of reach, so nothing
 * else is compared). The two kinds are told apart by the character before them.
 */
function requestKey(method: 'GET' | 'POST', accept: string, request: string | Buffer): string {
  if (request.length <= LARGEST_LITERAL_KEY) {
    const text = typeof request === 'string' ? request : request.toString('latin1');
    return `${method} ${accept}\n=${text}`;
  }
  return `${method} ${accept}\n#${hash('sha256', request, 'base64url')}`;
}
