import type { RequestListener } from 'node:http';
import { PATHS } from '../observability/route.js';
import type { GatewayMetrics } from './metrics.js';

/**
 * The listener of the metrics port (`METRICS_PORT`): `GET /metrics` in Prometheus text format,
 * 404 for anything else. Scrapes are not counted as HTTP requests: they are not the API's traffic.
 */
export function createMetricsListener(metrics: GatewayMetrics): RequestListener {
  return (req, res) => {
    const path = req.url?.split('?')[0];
    if (path !== PATHS.metrics) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      res.end('Method not allowed\n');
      return;
    }
    metrics.exposition().then(
      (text) => {
        res.writeHead(200, {
          'content-type': metrics.registry.contentType,
          'cache-control': 'no-store',
        });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => res.writeHead(500).end(),
    );
  };
}
