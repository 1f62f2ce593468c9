import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ErrorCode } from '../errors/error-code.js';
import { refusalBody } from '../errors/refusal.js';
import type { GatewayMetrics } from '../metrics/metrics.js';
import type { RequestScope } from '../observability/request-scope.js';
import { requestPath } from '../observability/route.js';
import type { Cors } from './cors.js';
import type { RequestLog } from './request-log.js';
import { isCompleteJson } from './response-cache/cacheability.js';
import type { EncodedAnswer } from './response-cache/encoded-answer.js';
import type { HitRecord } from './response-cache/store.js';
import { nodeHeadersOf, sendEncodedAnswer, sendOnce, streamResponse } from './send-response.js';

export interface AnswersOptions {
  readonly log: RequestLog;
  readonly metrics: Pick<GatewayMetrics, 'httpRequest'>;
  readonly logger: Logger;
  /** The configured origins' CORS headers (`createCors`); `undefined` when CORS is off. */
  readonly cors: Cors | undefined;
}

type NodeHeaders = Record<string, string | string[]>;

/** What an answer says to browsers and CDNs when its maker said nothing: keep nothing. */
const NO_STORE = 'no-store';

/**
 * The status logged and counted for an answer whose client was gone before its head could be
 * written (nginx's "client closed request"): nothing is sent, but the work was done.
 */
const CLIENT_GONE = 499;

/**
 * The one way an HTTP answer leaves the gateway, whoever made it: a response-cache hit, Yoga, the
 * GraphiQL page, a shared event stream, a refusal of the front door. Every answer gets the same
 * headers here (its request id as `x-request-id`; CORS headers for a listed origin, and
 * `Vary: Origin` whenever CORS is on; `Cache-Control: no-store` unless its maker set one), and
 * once its head is written, the same record: the request's log line, its HTTP metrics, and the
 * request span's attributes. A concern added here applies to every answer. A hit takes the same
 * steps with what its entry made once (the header list, the metric series, the operation).
 */
export function createAnswers({ log, metrics, logger, cors }: AnswersOptions) {
  /** What an answer at the GraphQL endpoint depends on besides its URL and body. */
  const vary = cors ? 'Accept, Accept-Encoding, Origin' : 'Accept, Accept-Encoding';

  /** Records an answer whose head is written: log line, metrics, span. */
  function sent(
    req: IncomingMessage,
    scope: RequestScope,
    status: number,
    hit?: HitRecord,
    now?: number,
  ): void {
    const ms = performance.now() - scope.started;
    const method = req.method as string;
    const path = requestPath(req.url);
    if (hit) {
      hit.countHit(status as 200 | 304, ms / 1000);
      scope.operation = hit.operation;
      // With tracing off, `span` is undefined and the attributes are never built.
      scope.span?.setAttributes({
        'gateway.response_cache': 'hit',
        ...(hit.operation ? { 'graphql.operation.name': hit.operation } : {}),
      });
      log.hit(scope, method, path, status, hit.operationField, ms, now ?? Date.now());
      return;
    }
    metrics.httpRequest(path, status, ms / 1000);
    log.answered(scope, method, path, status, ms);
  }

  /** Adds what every answer carries to the headers its maker gave. */
  function withCommonHeaders(req: IncomingMessage, scope: RequestScope, headers: NodeHeaders) {
    headers['x-request-id'] = scope.requestId;
    headers['cache-control'] ??= NO_STORE;
    if (cors) {
      const previous = headers.vary;
      headers.vary = previous ? `${previous}, Origin` : 'Origin';
      const list = cors.headersFor(req.headers.origin);
      for (let i = 0; i < list.length; i += 2) headers[list[i] as string] = list[i + 1] as string;
    }
    return headers;
  }

  /**
   * Writes the head of an answer whose body its maker writes (a shared event stream), with
   * `headers` its maker's; returns whether it was written (the client may be gone).
   */
  function head(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    status: number,
    headers: NodeHeaders,
  ): boolean {
    if (res.headersSent) return false;
    if (res.destroyed) return gone(req, scope);
    res.writeHead(status, withCommonHeaders(req, scope, { ...headers }));
    sent(req, scope, status);
    return true;
  }

  /** Records an answer whose client left before its head was written; false, as `head`. */
  function gone(req: IncomingMessage, scope: RequestScope): false {
    sent(req, scope, CLIENT_GONE);
    return false;
  }

  return {
    vary,
    head,
    gone,

    /**
     * A kept answer (a response-cache entry, the GraphiQL page) in the coding the request takes,
     * 304 when the client has it; `hit` when the response cache served it from memory, at `now`
     * (epoch ms) when the caller has read the clock already.
     */
    kept(
      req: IncomingMessage,
      res: ServerResponse,
      scope: RequestScope,
      answer: EncodedAnswer,
      cacheControl: string,
      hit?: HitRecord,
      now?: number,
    ): void {
      if (res.destroyed) return void gone(req, scope);
      const corsHeaders = cors?.headersFor(req.headers.origin);
      const status = sendEncodedAnswer(
        req,
        res,
        answer,
        cacheControl,
        scope.requestId,
        corsHeaders,
      );
      sent(req, scope, status, hit, now);
    },

    /**
     * A Fetch answer (Yoga's) whose body is `bytes`, or, without them, read as it comes: one
     * complete JSON document is sent at once (coded for this request when large), anything else
     * (an event stream, a multipart answer) streamed as it is produced.
     */
    async fetched(
      req: IncomingMessage,
      res: ServerResponse,
      scope: RequestScope,
      response: Response,
      bytes?: Buffer,
    ): Promise<void> {
      const headers = withCommonHeaders(req, scope, nodeHeadersOf(response));
      const { status } = response;
      if (bytes === undefined && !isCompleteJson(response.headers.get('content-type'))) {
        if (res.destroyed) {
          gone(req, scope);
          return void response.body?.cancel().catch(() => {});
        }
        res.writeHead(status, headers);
        sent(req, scope, status);
        await streamResponse(res, response);
        return;
      }
      const body = bytes ?? Buffer.from(await response.arrayBuffer());
      if (await sendOnce(req, res, status, headers, body, vary)) sent(req, scope, status);
      else gone(req, scope);
    },

    /**
     * A refusal of the front door's own, as every refusal looks: one GraphQL error with a code,
     * with `headers` besides (`Allow`, `Retry-After`).
     */
    refuse(
      req: IncomingMessage,
      res: ServerResponse,
      scope: RequestScope,
      status: number,
      code: ErrorCode,
      message: string,
      headers: Record<string, string> = {},
    ): void {
      const all = { 'content-type': 'application/json; charset=utf-8', ...headers };
      if (head(req, res, scope, status, all)) res.end(refusalBody(code, message));
    },

    /** A request that failed in the gateway itself: logged with its cause, answered 500. */
    failed(req: IncomingMessage, res: ServerResponse, scope: RequestScope, error: unknown): void {
      logger.error({ err: error, requestId: scope.requestId }, 'a request failed');
      if (head(req, res, scope, 500, {})) res.end();
      else res.destroy();
    },

    /**
     * A CORS preflight: with CORS on, 204 and the origin's CORS headers if it is listed; with CORS
     * off it is not answered here (false), and goes on like any request.
     */
    preflight(req: IncomingMessage, res: ServerResponse, scope: RequestScope): boolean {
      if (!cors) return false;
      // Safari waits for a body of a 204 without a length.
      if (head(req, res, scope, 204, { 'content-length': '0' })) res.end();
      return true;
    },
  };
}

export type Answers = ReturnType<typeof createAnswers>;
