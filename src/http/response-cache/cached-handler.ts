import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse } from 'graphql';
import type { Logger } from 'pino';
import { executedOperation } from '../../observability/executed-operation.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import { currentRequestScope } from '../../observability/request-scope.js';
import type { GatewayYoga } from '../gateway-yoga.js';
import { requestIdOf } from '../request-id.js';
import type { RequestLog } from '../request-log.js';
import { nodeHeadersOf, streamResponse } from '../send-response.js';
import { CacheabilityRecord, isCacheableAnswer, isCompleteJson } from './cacheability.js';
import type { ResponseCache } from './store.js';

export interface CachedHandlerOptions {
  readonly yoga: GatewayYoga;
  readonly store: ResponseCache;
  readonly metrics: GatewayMetrics;
  readonly log: RequestLog;
  readonly logger: Logger;
  /** Whether cross-origin requests get CORS headers (then they skip the cache: headers differ). */
  readonly cors: boolean;
}

/** Bodies above this go straight to Yoga: cacheable operations are small. */
const LARGEST_CACHED_REQUEST = 16 * 1024;

/**
 * The response cache in front of Yoga. A JSON POST whose exact bytes (with `Accept`) were answered
 * before, with an answer `isCacheableAnswer` allowed and whose snapshots are all still current, is
 * answered from memory: the same bytes, with its own request id, log line and metrics. Every miss
 * goes through Yoga in full (limits, CSRF, error masking, cookies), and an answer that is not one
 * complete JSON document is streamed through, never buffered.
 */
export function createCachedHandler(options: CachedHandlerOptions) {
  const { yoga, store, metrics, log, logger, cors } = options;
  const endpoint = yoga.graphqlEndpoint;

  /** Whether the response cache may answer this request; everything else goes to Yoga. */
  function accepts(req: IncomingMessage): boolean {
    const length = Number(req.headers['content-length']);
    return (
      req.method === 'POST' &&
      req.url === endpoint &&
      /^application\/json\b/i.test(req.headers['content-type'] ?? '') &&
      length > 0 &&
      length <= LARGEST_CACHED_REQUEST &&
      !(cors && req.headers.origin)
    );
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => res.destroy());
    // The socket's events run outside the request's scope: the answer is put back in it.
    req.on(
      'end',
      AsyncLocalStorage.bind(() => {
        const body = Buffer.concat(chunks).toString('utf8');
        answer(req, res, body).catch((error: unknown) => {
          logger.error({ err: error }, 'the response cache failed a request');
          if (!res.headersSent) res.writeHead(500).end();
          else res.destroy();
        });
      }),
    );
  }

  async function answer(req: IncomingMessage, res: ServerResponse, body: string) {
    // The front door opened the scope; the fallback only serves a handler called on its own.
    const scope = currentRequestScope() ?? {
      requestId: requestIdOf(req.headers['x-request-id']),
      started: performance.now(),
    };
    const key = `${req.headers.accept ?? ''}\n${body}`;
    const cached = store.lookup(key);
    if (cached) {
      res.writeHead(200, {
        'content-type': cached.contentType,
        'content-length': cached.body.byteLength,
        'x-request-id': scope.requestId,
      });
      res.end(cached.body);
      metrics.responseCacheRead('hit');
      const seconds = (performance.now() - scope.started) / 1000;
      metrics.operation(cached.operation, 'query', 'ok', seconds);
      scope.operation = cached.operation;
      scope.span?.setAttributes({
        'gateway.response_cache': 'hit',
        ...(cached.operation ? { 'graphql.operation.name': cached.operation } : {}),
      });
      log(scope, 'POST', endpoint, 200, 'hit');
      return;
    }

    const record = new CacheabilityRecord();
    const aborted = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) aborted.abort();
    });
    // A fixed origin: the client's Host header is not trusted to make a valid URL.
    const request = new Request(`http://gateway${endpoint}`, {
      method: 'POST',
      headers: toHeaders(req),
      body,
      signal: aborted.signal,
    });
    const response = await yoga.handleRequest(request, { req, cacheability: record });
    if (!isCompleteJson(response.headers.get('content-type'))) {
      metrics.responseCacheRead('miss');
      await streamResponse(res, response);
      return;
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, {
      ...nodeHeadersOf(response),
      'content-length': String(bytes.byteLength),
    });
    res.end(bytes);

    // A stale snapshot (served while the feed fails) is already not current: keeping an answer
    // built from it would only cost memory.
    const snapshots = record.snapshots;
    if (isCacheableAnswer(record, response, bytes) && store.allCurrent(snapshots)) {
      store.store(key, {
        body: bytes,
        contentType: response.headers.get('content-type') ?? 'application/json',
        snapshots: snapshots.map((snapshot) => new WeakRef(snapshot)),
        operation: operationNameOf(body),
      });
      metrics.responseCacheRead('stored');
    } else {
      metrics.responseCacheRead('miss');
    }
  }

  return { accepts, handle };
}

export type CachedHandler = ReturnType<typeof createCachedHandler>;

function toHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

/** The name of the operation a request body runs, for metrics and logs; only parsed on store. */
function operationNameOf(body: string): string | undefined {
  try {
    const { query, operationName } = JSON.parse(body) as { query?: string; operationName?: string };
    return query ? executedOperation(parse(query), operationName).name : undefined;
  } catch {
    return undefined;
  }
}
