import type { Logger } from 'pino';
import type { GatewayMetrics } from '../observability/metrics.js';

/** One HTTP request as the access log and the request metrics see it. */
export interface RequestRecord {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** When the request arrived, from `performance.now()`. */
  readonly started: number;
  readonly operation?: string | undefined;
  /** `hit` when the response cache answered. */
  readonly cache?: 'hit' | undefined;
}

/**
 * Writes the one log line and the metrics of a finished request, for the response cache's hits and
 * Yoga's pipeline alike. The line never holds the query string, the body or headers, which may
 * carry secrets.
 */
export function createRequestLog(logger: Logger, metrics: GatewayMetrics) {
  return (record: RequestRecord): void => {
    const { requestId, method, path, status, started, operation, cache } = record;
    const ms = performance.now() - started;
    metrics.httpRequest(path, status, ms / 1000);
    logger.info(
      {
        requestId,
        method,
        path,
        status,
        ms: Math.round(ms * 10) / 10,
        ...(operation ? { operation } : {}),
        ...(cache ? { cache } : {}),
      },
      'request',
    );
  };
}

export type RequestLog = ReturnType<typeof createRequestLog>;
