import { AggregatorRegistry, Counter, Gauge, type Registry } from 'prom-client';
import { z } from 'zod';

/** prom-client's aggregators: a metric naming another is summed. */
const AGGREGATORS = new Set(['sum', 'first', 'min', 'max', 'average', 'omit']);

/** How long a scrape waits for the workers' metrics: one that has not answered is left out. */
const COLLECT_MS = 2_000;

/** A worker's metrics as its registry writes them (`getMetricsAsJSON`), checked before they count. */
const WorkerMetrics = z
  .array(
    z.looseObject({
      name: z.string().regex(/^[a-zA-Z_:][a-zA-Z0-9_:]{0,199}$/),
      help: z.string().max(2_000),
      type: z.enum(['counter', 'gauge', 'histogram', 'summary']),
      aggregator: z.string().optional(),
      values: z
        .array(
          z.looseObject({
            value: z.number(),
            labels: z.record(z.string(), z.union([z.string(), z.number()])),
            metricName: z.string().max(200).optional(),
          }),
        )
        .max(100_000),
    }),
  )
  .max(1_000);
type WorkerMetrics = z.infer<typeof WorkerMetrics>;

export interface CollectedWorker {
  readonly id: number;
  /** Sends it the collect message; false when it cannot be reached. */
  collect(id: number): boolean;
}

/**
 * `/metrics` for the whole replica, made by the primary: each worker's registry (as JSON, through
 * the cluster's channel) summed series by series with prom-client's `AggregatorRegistry`, as
 * prom-client does for node:cluster, each metric by its `aggregator` (sum unless it says `max`,
 * `min`, `average`, `first` or `omit`), with the primary's own: the workers running and those
 * replaced. A counter of a worker that exits leaves the sum, as a restarted process's would: a
 * counter reset to Prometheus. Scrapes at the same time share one collection.
 */
export class ReplicaMetrics {
  readonly #registry: Registry;
  readonly #running: Gauge;
  readonly #replaced: Counter<'reason'>;
  #nextId = 0;
  #collection:
    | {
        readonly id: number;
        readonly waiting: Set<number>;
        readonly results: WorkerMetrics[];
        readonly done: () => void;
      }
    | undefined;
  #collecting: Promise<string> | undefined;

  constructor(registry: Registry) {
    this.#registry = registry;
    this.#running = new Gauge({
      name: 'gateway_workers',
      help: 'Worker processes of this replica running now (GATEWAY_WORKERS): the rest of /metrics sums theirs.',
      registers: [registry],
    });
    this.#replaced = new Counter({
      name: 'gateway_workers_replaced_total',
      help: 'Workers of this replica that exited unasked and were replaced, by reason: exit (an exit code) or signal.',
      labelNames: ['reason'] as const,
      registers: [registry],
    });
    this.#replaced.inc({ reason: 'exit' }, 0);
    this.#replaced.inc({ reason: 'signal' }, 0);
  }

  running(workers: number): void {
    this.#running.set(workers);
  }

  replaced(reason: 'exit' | 'signal'): void {
    this.#replaced.inc({ reason });
  }

  /** The replica's metrics in Prometheus text format. */
  collect(workers: Iterable<CollectedWorker>): Promise<string> {
    this.#collecting ??= this.#collect(workers).finally(() => {
      this.#collecting = undefined;
    });
    return this.#collecting;
  }

  /** Worker `worker`'s answer to collection `id`: its metrics' JSON. */
  collected(worker: number, id: number, body: string | undefined): void {
    const collection = this.#collection;
    if (!collection || collection.id !== id || !collection.waiting.has(worker)) return;
    collection.waiting.delete(worker);
    if (body !== undefined) {
      try {
        const metrics = WorkerMetrics.parse(JSON.parse(body));
        for (const metric of metrics) {
          if (!AGGREGATORS.has(String(metric.aggregator))) metric.aggregator = 'sum';
        }
        collection.results.push(metrics);
      } catch {
        // Left out: a worker's bug does not spoil the replica's metrics.
      }
    }
    if (collection.waiting.size === 0) collection.done();
  }

  /** A worker exited: the collection under way no longer waits for it. */
  workerGone(worker: number): void {
    const collection = this.#collection;
    if (!collection?.waiting.delete(worker)) return;
    if (collection.waiting.size === 0) collection.done();
  }

  async #collect(workers: Iterable<CollectedWorker>): Promise<string> {
    const id = this.#nextId++;
    const results: WorkerMetrics[] = [];
    const waiting = new Set<number>();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, COLLECT_MS);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#collection = { id, waiting, results, done };
      for (const worker of workers) if (worker.collect(id)) waiting.add(worker.id);
      if (waiting.size === 0) done();
    });
    this.#collection = undefined;
    const own = await this.#registry.getMetricsAsJSON();
    return AggregatorRegistry.aggregate([...results, own] as never).metrics();
  }
}
