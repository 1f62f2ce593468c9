/**
 * Queries at a steady rate, open loop: each request is due at its own time whatever became of
 * the ones before, and its latency counts from when it was due, so that a stalled server shows as
 * the wait its clients would have seen (no coordinated omission). For `bench/fanout.ts`: cached
 * queries sent while a change fans out.
 */
import { Agent, request } from 'node:http';
import { GRAPHQL_HEADERS } from './load.js';

export interface PacedSample {
  /** Epoch ms (fractional) the request was due. */
  dueAt: number;
  /** Due to the last byte of the answer, in ms; null when it failed. */
  latencyMs: number | null;
}

export interface PacedQueries {
  /** Stops sending and waits (at most `graceMs`) for the answers still out. */
  stop(graceMs?: number): Promise<PacedSample[]>;
}

const now = () => performance.timeOrigin + performance.now();

/** POSTs `body` to `url` `perSecond` times a second until stopped. */
export function pacedQueries(url: string, body: string, perSecond: number): PacedQueries {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const samples: PacedSample[] = [];
  const pending = new Set<Promise<void>>();
  const interval = 1_000 / perSecond;
  const start = now();
  let sent = 0;
  const send = (dueAt: number) => {
    const sample: PacedSample = { dueAt, latencyMs: null };
    samples.push(sample);
    const done = new Promise<void>((finish) => {
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent,
          headers: { ...GRAPHQL_HEADERS, 'content-length': Buffer.byteLength(body) },
          timeout: 30_000,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) sample.latencyMs = now() - dueAt;
            finish();
          });
          res.on('error', () => finish());
        },
      );
      req.on('timeout', () => req.destroy());
      req.on('error', () => finish());
      req.end(body);
    });
    pending.add(done);
    void done.then(() => pending.delete(done));
  };
  const timer = setInterval(
    () => {
      const due = Math.floor((now() - start) / interval);
      while (sent <= due) {
        send(start + sent * interval);
        sent += 1;
      }
    },
    Math.max(1, Math.floor(interval / 2)),
  );
  return {
    async stop(graceMs = 10_000) {
      clearInterval(timer);
      await Promise.race([
        Promise.all(pending),
        new Promise((done) => setTimeout(done, graceMs).unref()),
      ]);
      agent.destroy();
      return samples;
    },
  };
}

/** Latency percentiles (ms, one decimal) of the samples due in [from, to], failures counted apart. */
export function latencySummary(samples: readonly PacedSample[], from = -Infinity, to = Infinity) {
  const inWindow = samples.filter((sample) => sample.dueAt >= from && sample.dueAt <= to);
  const latencies = inWindow
    .map((sample) => sample.latencyMs)
    .filter((ms): ms is number => ms !== null)
    .sort((a, b) => a - b);
  const at = (q: number) =>
    latencies.length === 0
      ? null
      : Math.round((latencies[Math.ceil(q * latencies.length) - 1] ?? 0) * 10) / 10;
  return {
    sent: inWindow.length,
    failed: inWindow.length - latencies.length,
    p50: at(0.5),
    p99: at(0.99),
    max: at(1),
  };
}
