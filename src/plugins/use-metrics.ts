import type { Plugin } from 'graphql-yoga';
import type { GatewayMetrics } from '../metrics/metrics.js';
import { executedOperation } from '../observability/executed-operation.js';
import { errorCodesOf } from '../observability/result-errors.js';
import { PATHS } from '../observability/route.js';

/**
 * `GET /metrics` in Prometheus text format, the timing of every GraphQL operation by name, type
 * and outcome, and the errors answered by code. Upstream, cache and circuit metrics are fed by the
 * upstream clients; HTTP requests by the request log.
 */
export function useMetrics({
  metrics,
  serveEndpoint,
}: {
  metrics: GatewayMetrics;
  /** Serve `GET /metrics` on this port; off when `METRICS_PORT` serves it on a port of its own. */
  serveEndpoint: boolean;
}): Plugin {
  return {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (!serveEndpoint || request.method !== 'GET' || url.pathname !== PATHS.metrics) return;
      endResponse(
        new fetchAPI.Response(await metrics.exposition(), {
          headers: { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' },
        }),
      );
    },
    onResultProcess({ result }) {
      for (const code of errorCodesOf(result)) metrics.error(code);
    },
    onExecute({ args }) {
      const started = performance.now();
      const { name, type } = executedOperation(args.document, args.operationName);
      return {
        onExecuteDone({ result }) {
          const failed = 'errors' in result && (result.errors?.length ?? 0) > 0;
          metrics.operation(
            name,
            type,
            failed ? 'error' : 'ok',
            (performance.now() - started) / 1000,
          );
        },
      };
    },
  };
}
