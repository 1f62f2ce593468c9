import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { UpstreamEndpoint } from '../errors/upstream-error.js';
import type { CircuitState } from '../upstreams/circuit-breaker.js';
import type { SnapshotCacheEvent } from '../upstreams/snapshot-cache.js';
import type { UpstreamObserver } from '../upstreams/upstream-client.js';

const CIRCUIT_VALUES: Record<CircuitState, number> = { closed: 0, 'half-open': 1, open: 2 };
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The gateway's Prometheus metrics, in a registry of its own (not prom-client's global one), so
 * every gateway instance counts for itself. Label values come from a closed set (operation names
 * are the client's, so they are cut to a safe length); no label ever carries a variable's value.
 */
export class GatewayMetrics implements UpstreamObserver {
  readonly registry = new Registry();

  readonly #operations = new Histogram({
    name: 'graphql_operation_duration_seconds',
    help: 'GraphQL operations executed, by operation name, type and outcome (ok or error).',
    labelNames: ['operation', 'type', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly #upstreamRequests = new Histogram({
    name: 'upstream_request_duration_seconds',
    help: 'Requests to upstreams, by upstream, endpoint and HTTP status (error: no whole answer; rejected: circuit open).',
    labelNames: ['upstream', 'method', 'endpoint', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly #cacheReads = new Counter({
    name: 'snapshot_cache_reads_total',
    help: 'Reads of the shared upstream snapshots: hit (fresh), miss (fetched), coalesced (joined a fetch under way), stale (served the last good snapshot while the upstream failed).',
    labelNames: ['endpoint', 'result'] as const,
    registers: [this.registry],
  });

  readonly #responseCache = new Counter({
    name: 'response_cache_reads_total',
    help: 'Whole answers served from the response cache (hit), built and kept (stored), or built and not kept (miss: uncacheable).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly #circuit = new Gauge({
    name: 'upstream_circuit_state',
    help: 'Circuit breaker per upstream: 0 closed, 1 half-open, 2 open.',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });

  readonly #httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route and status.',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });

  operation(name: string | undefined, type: string, outcome: 'ok' | 'error', seconds: number) {
    const operation = name ? name.slice(0, 64) : 'anonymous';
    this.#operations.observe({ operation, type, outcome }, seconds);
  }

  request(endpoint: UpstreamEndpoint, outcome: number | 'error' | 'rejected', seconds: number) {
    const { upstream, method, path } = endpoint;
    // Paths with ids in them (APIv2 jobs) would make a series per id.
    const endpointLabel = path.replace(/\/[0-9a-fA-Fx-]{16,}/g, '/:id');
    this.#upstreamRequests.observe(
      { upstream, method, endpoint: endpointLabel, status: String(outcome) },
      seconds,
    );
  }

  circuit(upstream: string, state: CircuitState) {
    this.#circuit.set({ upstream }, CIRCUIT_VALUES[state]);
  }

  cacheRead(endpoint: string, result: SnapshotCacheEvent) {
    this.#cacheReads.inc({ endpoint, result });
  }

  responseCacheRead(result: 'hit' | 'stored' | 'miss') {
    this.#responseCache.inc({ result });
  }

  httpRequest(route: string, status: number) {
    this.#httpRequests.inc({ route, status: String(status) });
  }
}
