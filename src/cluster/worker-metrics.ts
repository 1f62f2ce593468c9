import type { GatewayMetrics } from '../metrics/metrics.js';
import { MetricsAnswer } from './messages.js';
import type { PrimaryLink } from './primary-link.js';

/** How long a scrape waits for the primary: its collection waits 2 s for the workers at most. */
const REPLICA_METRICS_MS = 5_000;

/**
 * A worker's part in the replica's `/metrics`: it hands its registry to the primary when asked
 * (as JSON), and answers `/metrics` with what the primary made of every worker's. A scrape while
 * the primary cannot be reached fails (500) rather than passing one worker's counters off as the
 * replica's.
 */
export function serveReplicaMetrics(primary: PrimaryLink, metrics: GatewayMetrics): void {
  primary.on('collect', ({ id }) => {
    metrics.registry.getMetricsAsJSON().then(
      (json) => primary.tell({ t: 'collected', id }, JSON.stringify(json)),
      () => primary.tell({ t: 'collected', id }),
    );
  });
  metrics.servesReplica(async () => {
    const reply = await primary.ask({ op: 'metrics' }, undefined, REPLICA_METRICS_MS);
    const answer = MetricsAnswer.safeParse(reply.head);
    if (!answer.success || !answer.data.ok || reply.body === undefined) {
      throw new Error("the primary could not make the replica's metrics");
    }
    return reply.body;
  });
}
