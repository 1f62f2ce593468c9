import type { Logger } from 'pino';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { RequestScope } from '../observability/request-scope.js';

/**
 * Writes the one log line and the metrics of a finished request, for the response cache's hits and
 * Yoga's pipeline alike: its id, route, status and time, the operation it ran, the code of the
 * first error its answer carries (every 4xx has one) and the result type of fields that answer a
 * union of outcomes (`results: { verifyContract: 'UpstreamUnavailableError' }`). The line never
 * holds the query string, the body or headers, which may carry secrets.
 */
export function createRequestLog(logger: Logger, metrics: GatewayMetrics) {
  return (
    scope: RequestScope,
    method: string,
    path: string,
    status: number,
    cache?: 'hit',
  ): void => {
    const { requestId, started, operation, errorCode, results } = scope;
    const ms = performance.now() - started;
    metrics.httpRequest(path, status, ms / 1000);
    const line = {
      requestId,
      method,
      path,
      status,
      ms: Math.round(ms * 10) / 10,
      ...(operation ? { operation } : {}),
      ...(errorCode ? { code: errorCode } : {}),
      ...(results ? { results } : {}),
      ...(cache ? { cache } : {}),
    };
    if (status >= 500) logger.error(line, 'request');
    else logger.info(line, 'request');
  };
}

export type RequestLog = ReturnType<typeof createRequestLog>;
