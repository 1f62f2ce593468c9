import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse } from 'graphql';
import type { YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { GatewayContext } from './context.js';
import type { GatewayMetrics } from './metrics.js';
import { executedOperation } from './plugins/executed-operation.js';
import type { ResponseCache } from './response-cache.js';

export interface NodeListenerOptions {
  readonly yoga: YogaServerInstance<Record<string, never>, GatewayContext>;
  readonly responseCache: ResponseCache;
  /** The context the gateway made for a request it handled. */
  readonly contextOf: (request: Request) => GatewayContext | undefined;
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  /** Whether cross-origin requests get CORS headers (then they skip the cache: headers differ). */
  readonly cors: boolean;
}

/** Bodies above this go straight to Yoga: cacheable operations are small. */
const LARGEST_CACHED_REQUEST = 16 * 1024;
const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * The gateway's node:http listener. A JSON POST of a status query whose answer is cached, and
 * whose snapshots are still current, is answered from memory without Yoga's pipeline: the same
 * bytes, with its own request id, log line and metrics. Everything else, and every miss, goes
 * through Yoga in full (limits, CSRF, error masking, cookies). Only exact repeats of requests that
 * already passed every check can hit, and an answer is cached only if it had no errors and read
 * nothing but status feed snapshots.
 */
export function createNodeListener(options: NodeListenerOptions): RequestListener {
  const { yoga, responseCache, contextOf, metrics, logger, cors } = options;
  const endpoint = yoga.graphqlEndpoint;

  return (req, res) => {
    const host = req.headers.host;
    if (host !== undefined && !URL.canParse(`http://${host}/`)) {
      // Yoga's adapter would fail to build the request URL and answer 500 with a stack trace.
      const body = JSON.stringify({
        errors: [{ message: 'The Host header is not a valid host.' }],
      });
      res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' }).end(body);
      return;
    }
    const length = Number(req.headers['content-length']);
    const candidate =
      req.method === 'POST' &&
      req.url === endpoint &&
      /^application\/json\b/i.test(req.headers['content-type'] ?? '') &&
      length > 0 &&
      length <= LARGEST_CACHED_REQUEST &&
      !(cors && req.headers.origin);
    if (!candidate) {
      void yoga(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      answer(req, res, body).catch((error: unknown) => {
        logger.error({ err: error }, 'the response cache failed a request');
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    });
  };

  async function answer(req: IncomingMessage, res: ServerResponse, body: string) {
    const started = performance.now();
    const key = `${req.headers.accept ?? ''}\n${body}`;
    const cached = responseCache.lookup(key);
    if (cached) {
      const incoming = req.headers['x-request-id'];
      const requestId =
        typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
      res.writeHead(200, {
        'content-type': cached.contentType,
        'content-length': cached.body.byteLength,
        'x-request-id': requestId,
      });
      res.end(cached.body);
      const seconds = (performance.now() - started) / 1000;
      metrics.responseCacheRead('hit');
      metrics.operation(cached.operation, 'query', 'ok', seconds);
      metrics.httpRequest(endpoint, 200);
      logger.info(
        {
          requestId,
          method: 'POST',
          path: endpoint,
          status: 200,
          ms: Math.round(seconds * 10_000) / 10,
          ...(cached.operation ? { operation: cached.operation } : {}),
          cache: 'hit',
        },
        'request',
      );
      return;
    }

    // A fixed origin: the client's Host header is not trusted to make a valid URL.
    const request = new Request(`http://gateway${endpoint}`, {
      method: 'POST',
      headers: toHeaders(req),
      body,
    });
    const response = await yoga.fetch(request);
    const bytes = Buffer.from(await response.arrayBuffer());
    const cookies = response.headers.getSetCookie();
    const headers: Record<string, string | string[]> = {};
    response.headers.forEach((value, name) => {
      if (name !== 'set-cookie') headers[name] = value;
    });
    if (cookies.length > 0) headers['set-cookie'] = cookies;
    headers['content-length'] = String(bytes.byteLength);
    res.writeHead(response.status, headers);
    res.end(bytes);

    const context = contextOf(request);
    if (
      response.status === 200 &&
      cookies.length === 0 &&
      context?.provenance.onlySnapshots &&
      context.partialErrors.length === 0 &&
      !hasErrors(bytes)
    ) {
      responseCache.store(key, {
        body: bytes,
        contentType: response.headers.get('content-type') ?? 'application/json',
        snapshots: [...context.provenance.snapshots],
        operation: operationNameOf(body),
      });
      metrics.responseCacheRead('stored');
    } else {
      metrics.responseCacheRead('miss');
    }
  }
}

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

function hasErrors(body: Buffer): boolean {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { errors?: unknown };
    return parsed.errors !== undefined;
  } catch {
    return true;
  }
}
