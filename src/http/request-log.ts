import { type DestinationStream, type Logger, pino } from 'pino';
import type { Config } from '../config.js';
import type { RequestScope } from '../observability/request-scope.js';

/** pino's number for `info`, the level of a response-cache hit's line. */
const INFO = 30;

/**
 * The paths an orchestrator polls to learn whether the gateway is alive and ready: every few seconds
 * per replica, for the whole life of the process. Their answers are logged at `debug` while they
 * pass, so that they do not bury the requests of clients at `info`; a probe that fails keeps its line.
 */
const HEALTH_PROBES = new Set(['/health', '/readiness']);

/**
 * Writes the one log line of an answered request (see `Answers`), for the response cache's hits
 * and every other answer alike: its id, route, status and time, the operation it ran, the code of the
 * first error its answer carries (every 4xx has one) and the result type of fields that answer a
 * union of outcomes (`results: { verifyContract: 'UpstreamUnavailableError' }`). The line never
 * holds the query string, the body or headers, which may carry secrets, nor a webhook's token: its
 * path is the one `requestPath` makes, `/webhooks/statuspage/<slug>/redacted`.
 */
export function createRequestLog(
  logger: Logger,
  { mode, sampledHitsPerSecond }: Config['logRequests'],
) {
  // A hit's line, built by hand, goes straight to pino's destination (`pino.symbols` serve that).
  const destination: DestinationStream = Reflect.get(logger, pino.symbols.streamSym);
  /** With `sampled`: the second (epoch s) being counted, its hits with a line, those without. */
  let second = 0;
  let hitLines = 0;
  let skipped = 0;
  const reportSkipped = () => {
    if (skipped === 0) return;
    logger.info(
      { cache: 'hit', skipped, second: new Date(second * 1000).toISOString() },
      'request lines skipped',
    );
    skipped = 0;
  };
  // A second's count is written when the next hit comes, or by this once the second is over.
  const reporter =
    mode === 'sampled'
      ? setInterval(() => {
          if (Math.floor(Date.now() / 1000) !== second) reportSkipped();
        }, 1_000).unref()
      : undefined;
  // The fields pino puts on every line (`service`), as it writes them.
  const bindings = JSON.stringify(logger.bindings()).slice(1, -1);
  const base = bindings === '' ? '' : `,${bindings}`;

  /** Any answer but a response-cache hit, `ms` after the request came. */
  function answered(
    scope: RequestScope,
    method: string,
    path: string,
    status: number,
    ms: number,
  ): void {
    const { requestId, operation, errorCode, results } = scope;
    if (mode === 'errors' && status < 400 && !errorCode && !results) return;
    const line = {
      requestId,
      method,
      path,
      status,
      ms: Math.round(ms * 10) / 10,
      ...(operation ? { operation } : {}),
      ...(errorCode ? { code: errorCode } : {}),
      ...(results ? { results } : {}),
    };
    if (status >= 500) logger.error(line, 'request');
    else if (status < 400 && HEALTH_PROBES.has(path)) logger.debug(line, 'request');
    else logger.info(line, 'request');
  }

  /**
   * The line of a response-cache hit (200, or 304 to a conditional request) at `now` (epoch ms),
   * the hot path. The line is the one pino would write, built by hand, because pino's serializing
   * (mixin, redaction, object spread) cost as much as the rest of the hit; `operationField` is
   * `,"operation":"…"` (or empty), made once when the answer was stored. Nothing in it needs
   * escaping: a request id is `[\w.:-]` or a UUID, and method and path are the front door's own.
   */
  function hit(
    scope: RequestScope,
    method: string,
    path: string,
    status: number,
    operationField: string,
    ms: number,
    now: number,
  ): void {
    if (mode === 'sampled') {
      const current = Math.floor(now / 1000);
      if (current !== second) {
        reportSkipped();
        second = current;
        hitLines = 0;
      }
      if (hitLines >= sampledHitsPerSecond) {
        skipped += 1;
        return;
      }
      hitLines += 1;
    } else if (mode !== 'all') return;
    if (!logger.isLevelEnabled('info')) return;
    destination.write(
      `{"level":${INFO},"time":${now}${base},"requestId":"${scope.requestId}","method":"${method}","path":"${path}","status":${status},"ms":${Math.round(ms * 10) / 10}${operationField},"cache":"hit","msg":"request"}\n`,
    );
  }

  /** Writes the count of hit lines skipped so far, and stops counting by the second. */
  function close(): void {
    clearInterval(reporter);
    reportSkipped();
  }

  return { answered, hit, close };
}

export type RequestLog = ReturnType<typeof createRequestLog>;
