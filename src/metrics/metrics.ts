import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { ERROR_CODES } from '../errors/error-code.js';
import type { UpstreamEndpoint } from '../errors/upstream-error.js';
import { endpointTemplate, routeOf } from '../observability/route.js';
import type { RedisState } from '../redis/redis-connection.js';
import { SUBSCRIPTION_FIELDS } from '../subscriptions/admission.js';
import type { CircuitState } from '../upstreams/circuit-breaker.js';
import type { SnapshotCacheEvent } from '../upstreams/snapshot-cache.js';
import type { ReleaseReason } from '../upstreams/status-feed/resident-pages.js';
import type { StatusPagesObserver } from '../upstreams/status-feed/status-pages.js';
import type { UpstreamObserver } from '../upstreams/upstream-client.js';
import type { JobWatchObserver } from '../upstreams/verification/job-watcher.js';
import { BoundCounter, BoundHistogram } from './bound-metrics.js';

const CIRCUIT_VALUES: Record<CircuitState, number> = { closed: 0, 'half-open': 1, open: 2 };
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Operation names counted by name, first come; later new names are `other`. */
const MOST_OPERATION_NAMES = 100;
const OPERATION_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,63}$/;

/** Error codes counted by name: every code the gateway answers (the registry's). */
const ERROR_CODE_LABELS = new Set<string>(Object.keys(ERROR_CODES));

/** A subscription's root field as a label: one of `SUBSCRIPTION_FIELDS`, or `other`. */
const fieldLabel = (field: string) =>
  (SUBSCRIPTION_FIELDS as readonly string[]).includes(field) ? field : 'other';

/** A label value in snake_case: `status feed` → `status_feed`. */
const snakeCase = (value: string) => value.toLowerCase().replace(/[^a-z0-9]+/g, '_');

/**
 * The gateway's Prometheus metrics, in a registry of its own (not prom-client's global one), so
 * every gateway instance counts for itself. The number of series is bounded whatever clients
 * send: routes outside a fixed set and operation names past the first 100 collapse into `other`,
 * upstream paths are templates, and no label ever carries an id or a variable's value.
 */
export class GatewayMetrics implements UpstreamObserver, StatusPagesObserver, JobWatchObserver {
  readonly registry = new Registry();

  /** The replica's metrics, when this process is one of its workers (`servesReplica`). */
  #replica: (() => Promise<string>) | undefined;

  constructor() {
    // Process and Node.js metrics: memory, CPU, event-loop lag, GC, handles.
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * `/metrics` answers `replica()` from now on: this process is one of a replica's workers, and
   * its primary sums every worker's registry (each metric by its `aggregator`: sum, unless said).
   */
  servesReplica(replica: () => Promise<string>): void {
    this.#replica = replica;
  }

  /** What `/metrics` answers, in Prometheus text format (`registry.contentType`). */
  exposition(): Promise<string> {
    return this.#replica ? this.#replica() : this.registry.metrics();
  }

  // The four metrics every request, response-cache hits included, touches are bound metrics:
  // prom-client's cost a hit about 7 µs.
  readonly #httpDurations = new BoundHistogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests answered, by route and status, from arrival to the last byte handed to the socket.',
    labelNames: ['route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly #errors = new Counter({
    name: 'graphql_errors_total',
    help: 'Errors in GraphQL answers, by extensions.code (other for codes outside the known set).',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  readonly #operations = new BoundHistogram({
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
    help: 'Reads of the shared upstream snapshots: hit (fresh), miss (fetched), coalesced (joined a fetch under way), revalidating (served the last snapshot while it is refetched), stale (served the last good snapshot while the upstream failed), unchanged (a refetch the upstream answered 304 Not Modified: the snapshot on hand confirmed, no body, nothing parsed or built).',
    labelNames: ['endpoint', 'result'] as const,
    registers: [this.registry],
  });

  readonly #responseCache = new BoundCounter({
    name: 'response_cache_reads_total',
    help: 'Whole answers served from the response cache (hit), built and kept (stored), or built and not kept (miss: uncacheable).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly #circuit = new Gauge({
    name: 'upstream_circuit_state',
    help: 'Circuit breaker per upstream: 0 closed, 1 half-open, 2 open. Status pages past the first 20 configured have none of their own: see upstream_circuits_open.',
    labelNames: ['upstream'] as const,
    // Of a replica's workers, the most open.
    aggregator: 'max',
    registers: [this.registry],
  });

  readonly #circuitsOpen = new Gauge({
    name: 'upstream_circuits_open',
    help: 'Circuits not closed (open or half-open) among upstreams that share a label: status_feed_other, the status pages past the first 20 configured.',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });

  readonly #pagesResident = new Gauge({
    name: 'status_pages_resident',
    help: 'Status pages held in memory (their snapshots, upstream client and poller), followed or recently asked for.',
    registers: [this.registry],
  });

  readonly #pagesBytes = new Gauge({
    name: 'status_pages_bytes',
    help: 'What the resident status pages hold, as estimated from their documents’ sizes; kept within STATUS_PAGES_MAX_BYTES.',
    registers: [this.registry],
  });

  readonly #pagesReleased = new Counter({
    name: 'status_pages_released_total',
    help: 'Status pages let go, by reason: budget (the others needed the room, STATUS_PAGES_MAX_BYTES), idle (not asked for within STATUS_PAGE_IDLE_MS), removed (removed from STATUS_PAGES_FILE, or its feed changed there, while running).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly #httpRequests = new BoundCounter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route and status.',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });

  readonly #subscriptionsOpen = new Gauge({
    name: 'graphql_subscriptions_open',
    help: 'Subscriptions open now, by root field and transport (http: SSE or multipart; websocket: graphql-ws).',
    labelNames: ['field', 'transport'] as const,
    registers: [this.registry],
  });

  readonly #subscriptionsEnded = new Counter({
    name: 'graphql_subscriptions_ended_total',
    help: 'Subscriptions ended, by root field, transport and reason: client (unsubscribed or went away), complete (nothing more to send), shutdown, slow (fell behind SUBSCRIPTION_BACKLOG), page-removed and page-changed (a page it followed was removed from STATUS_PAGES_FILE, or its feed changed there), refused (over a limit, never opened).',
    labelNames: ['field', 'transport', 'reason'] as const,
    registers: [this.registry],
  });

  readonly #subscriptionFanOuts = new Histogram({
    name: 'graphql_subscription_fanout_seconds',
    help: 'Events of shared subscriptions handed to every subscriber, by root field: from the event to its last subscriber’s write.',
    labelNames: ['field'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly #subscriptionExecutions = new Counter({
    name: 'graphql_subscription_executions_total',
    help: 'Subscription events executed, by root field: subscribers of the same operation share one execution of an event, so this grows with the distinct operations, not the subscribers.',
    labelNames: ['field'] as const,
    registers: [this.registry],
  });

  readonly #statusChanges = new Counter({
    name: 'status_changes_total',
    help: 'Changes of the status feed delivered to this replica, by type (page, component, incident, maintenance).',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });

  readonly #jobsWatched = new Gauge({
    name: 'verification_jobs_watched',
    help: 'Verification jobs verificationJobChanged subscribers follow on this replica (one watch per job, whoever subscribes; kept until its next poll is due after its last subscriber leaves).',
    registers: [this.registry],
  });

  readonly #jobPollsWaiting = new Gauge({
    name: 'verification_job_polls_waiting',
    help: 'Watched verification jobs whose poll is due and held back by VERIFY_WATCH_MAX_POLLS_PER_SECOND, as of the last poll started.',
    registers: [this.registry],
  });

  readonly #jobPollDelays = new Histogram({
    name: 'verification_job_poll_delay_seconds',
    help: 'Polls of watched verification jobs started, by how long after they were due (the budget of VERIFY_WATCH_MAX_POLLS_PER_SECOND shared by every watch): its count is the polls made.',
    buckets: [0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  readonly #operationNames = new Set<string>();

  /** Made on first use: without REDIS_URL there is no such series. */
  #redis: Gauge | undefined;

  operation(name: string | undefined, type: string, outcome: 'ok' | 'error', seconds: number) {
    this.#operations.observe({ operation: this.#operationLabel(name), type, outcome }, seconds);
  }

  #operationLabel(name: string | undefined): string {
    if (!name) return 'anonymous';
    if (this.#operationNames.has(name)) return name;
    if (!OPERATION_NAME.test(name) || this.#operationNames.size >= MOST_OPERATION_NAMES) {
      return 'other';
    }
    this.#operationNames.add(name);
    return name;
  }

  request(endpoint: UpstreamEndpoint, outcome: number | 'error' | 'rejected', seconds: number) {
    const { upstream, method, path } = endpoint;
    this.#upstreamRequests.observe(
      {
        upstream: snakeCase(upstream),
        method,
        endpoint: endpointTemplate(path),
        status: String(outcome),
      },
      seconds,
    );
  }

  circuit(upstream: string, state: CircuitState) {
    this.#circuit.set({ upstream: snakeCase(upstream) }, CIRCUIT_VALUES[state]);
  }

  circuitsOpen(upstream: string, count: number) {
    this.#circuitsOpen.set({ upstream: snakeCase(upstream) }, count);
  }

  residentPages(pages: number, bytes: number) {
    this.#pagesResident.set(pages);
    this.#pagesBytes.set(bytes);
  }

  pageReleased(reason: ReleaseReason) {
    this.#pagesReleased.inc({ reason });
  }

  redisState(state: RedisState) {
    this.#redis ??= new Gauge({
      name: 'redis_connected',
      help: 'Whether this replica shares state with the others through Redis (1) or works alone because Redis is unavailable (0). Only with REDIS_URL.',
      // Of a replica's workers, 0 when any works alone.
      aggregator: 'min',
      registers: [this.registry],
    });
    this.#redis.set(state === 'connected' ? 1 : 0);
  }

  cacheRead(endpoint: string, result: SnapshotCacheEvent) {
    this.#cacheReads.inc({ endpoint, result });
  }

  responseCacheRead(result: 'hit' | 'stored' | 'miss') {
    this.#responseCache.inc({ result });
  }

  httpRequest(path: string, status: number, seconds: number) {
    const labels = { route: routeOf(path), status: String(status) };
    this.#httpRequests.inc(labels);
    this.#httpDurations.observe(labels, seconds);
  }

  /**
   * What a response-cache hit of `operation` at `path` counts, with its series found once (when
   * the answer is stored) rather than per hit: `response_cache_reads_total{result="hit"}`, the
   * operation's duration, and the HTTP request with its status (200, or 304 to a conditional
   * request).
   */
  cacheHit(
    operation: string | undefined,
    path: string,
  ): (status: 200 | 304, seconds: number) => void {
    const hits = this.#responseCache.series({ result: 'hit' });
    const operations = this.#operations.series({
      operation: this.#operationLabel(operation),
      type: 'query',
      outcome: 'ok',
    });
    const route = routeOf(path);
    const byStatus = (status: string) => ({
      requests: this.#httpRequests.series({ route, status }),
      durations: this.#httpDurations.series({ route, status }),
    });
    const ok = byStatus('200');
    const notModified = byStatus('304');
    return (status, seconds) => {
      hits.inc();
      operations.observe(seconds);
      const http = status === 200 ? ok : notModified;
      http.requests.inc();
      http.durations.observe(seconds);
    };
  }

  /** `field` and `transport` come from fixed sets (`SUBSCRIPTION_FIELDS`), never from clients. */
  subscriptionOpened(field: string, transport: string) {
    this.#subscriptionsOpen.inc({ field, transport });
  }

  subscriptionEnded(field: string, transport: string, reason: string) {
    if (reason !== 'refused') this.#subscriptionsOpen.dec({ field, transport });
    this.#subscriptionsEnded.inc({ field, transport, reason });
  }

  subscriptionExecuted(field: string) {
    this.#subscriptionExecutions.inc({ field: fieldLabel(field) });
  }

  subscriptionFannedOut(field: string, seconds: number) {
    this.#subscriptionFanOuts.observe({ field: fieldLabel(field) }, seconds);
  }

  statusChange(type: string) {
    this.#statusChanges.inc({ type });
  }

  jobsWatched(count: number) {
    this.#jobsWatched.set(count);
  }

  jobPollsWaiting(count: number) {
    this.#jobPollsWaiting.set(count);
  }

  jobPollStarted(seconds: number) {
    this.#jobPollDelays.observe(seconds);
  }

  error(code: unknown) {
    this.#errors.inc({
      code: typeof code === 'string' && ERROR_CODE_LABELS.has(code) ? code : 'other',
    });
  }
}
