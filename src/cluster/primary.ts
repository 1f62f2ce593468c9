import cluster, { type Worker } from 'node:cluster';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { Config } from '../config.js';
import { createLogger, flushLogger } from '../observability/logger.js';
import { MAX_STORED_SNAPSHOT_BYTES } from '../upstreams/shared-document.js';
import { decode, encode } from './envelope.js';
import { forwardLines } from './log-lines.js';
import { Ask, FromWorker } from './messages.js';
import { ReplicaMetrics } from './replica-metrics.js';
import { SnapshotHub } from './snapshot-hub.js';

/** The longest change event passed on (as over Redis). */
const MAX_CHANGE_CHARS = 1024 * 1024;

/** A worker that ran this long before it exited is replaced at once; sooner, it is backing off. */
const STABLE_MS = 10_000;
/** The first pause before a worker that keeps exiting is replaced again, doubled each time. */
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;
/** Past SHUTDOWN_GRACE_MS, what workers get to close their gateway and write their last lines. */
const CLOSE_MS = 10_000;
/** One line a minute at most about messages refused. */
const LOG_EVERY_MS = 60_000;

interface Slot {
  readonly index: number;
  worker?: Worker | undefined;
  startedAt: number;
  /** Exits in a row, each before `STABLE_MS`. */
  crashes: number;
  restart?: NodeJS.Timeout | undefined;
}

/**
 * The primary of a replica of `GATEWAY_WORKERS` workers (node:cluster, as Hive Gateway's `--fork`):
 * it forks them, each running `main.ts` as a whole gateway on the shared port, and serves them
 * what Redis serves replicas (`SnapshotHub`: one fetch of each document per TTL, its notices; change
 * events passed on to every other worker), the replica's `/metrics` (`ReplicaMetrics`), and their
 * log lines, whole, on its stdout. It replaces a worker that exits unasked (logged with its code
 * or signal; one that keeps exiting waits longer each time, up to 30 s), forwards SIGHUP, and on
 * SIGTERM or SIGINT has every worker drain (each shuts down as a lone gateway does), then exits:
 * 0 when every worker stopped cleanly within `SHUTDOWN_GRACE_MS`. It answers no request itself.
 */
export function runPrimary(config: Config): void {
  const workers = config.server.workers;
  // One writer of stdout: the primary's own lines and the workers' go through the same stream.
  const stdout = pino.destination({ dest: 1, sync: false });
  const logger = createLogger(config.logLevel, stdout).child({ pid: process.pid });
  const slots: Slot[] = Array.from({ length: workers }, (_, index) => ({
    index,
    startedAt: 0,
    crashes: 0,
  }));
  const hub = new SnapshotHub({
    maxChars: config.statusFeed.maxBytes,
    notify: (name, version, fetchedAt) => {
      const message = encode({ t: 'notice', name, version, fetchedAt });
      if (message !== undefined) for (const worker of live()) send(worker, message);
    },
  });
  const metrics = new ReplicaMetrics(new Registry());
  let stopping = false;
  let listened = false;
  let refusedAt = 0;

  function live(): Worker[] {
    return slots.flatMap(({ worker }) => (worker?.isConnected() ? [worker] : []));
  }

  function send(worker: Worker, message: string): boolean {
    try {
      return worker.isConnected() && worker.send(message);
    } catch {
      return false;
    }
  }

  function answer(worker: Worker, id: number, head: object, body?: string): void {
    const message = encode({ t: 'answer', id, ...head }, body);
    if (message !== undefined) send(worker, message);
  }

  function refused(worker: Worker, kind: string): void {
    const now = Date.now();
    if (now - refusedAt < LOG_EVERY_MS) return;
    refusedAt = now;
    logger.warn(
      { worker: worker.id, workerPid: worker.process.pid, refused: kind },
      'a message from a worker was refused (not of its shape or too large)',
    );
  }

  function receive(worker: Worker, message: unknown): void {
    // Not ours (node:cluster's own messages are objects): not a string.
    if (typeof message !== 'string') return;
    const envelope = decode(message);
    const kind = envelope && FromWorker.safeParse(envelope.head);
    if (!envelope || !kind?.success) {
      refused(worker, 'malformed message');
      return;
    }
    const { body } = envelope;
    switch (kind.data.t) {
      case 'ask': {
        const parsed = Ask.safeParse(envelope.head);
        if (!parsed.success) {
          refused(worker, 'malformed ask');
          return;
        }
        const ask = parsed.data;
        switch (ask.op) {
          case 'read': {
            const read = hub.read(ask.name, ask.known);
            answer(worker, ask.id, read.answer, read.body);
            return;
          }
          case 'acquire':
            hub.acquire(worker.id, ask, (acquired, stored) =>
              answer(worker, ask.id, acquired, stored),
            );
            return;
          case 'store': {
            const fits = body !== undefined && body.length <= MAX_STORED_SNAPSHOT_BYTES;
            if (!fits) refused(worker, 'oversized snapshot');
            answer(worker, ask.id, { stored: fits && hub.store(ask, body) });
            return;
          }
          case 'confirm':
            answer(worker, ask.id, { confirmed: hub.confirm(ask) });
            return;
          case 'metrics':
            metrics.running(live().length);
            metrics
              .collect(
                live().map((each) => ({
                  id: each.id,
                  collect: (id) => {
                    const request = encode({ t: 'collect', id });
                    return request !== undefined && send(each, request);
                  },
                })),
              )
              .then(
                (text) => answer(worker, ask.id, { ok: true }, text),
                (error: unknown) => {
                  logger.error({ err: error }, "the replica's metrics could not be made");
                  answer(worker, ask.id, { ok: false });
                },
              );
            return;
        }
        return;
      }
      case 'fail':
      case 'renew':
      case 'release':
        // Parsed whole by `FromWorker`'s union: the head is one of these.
        if (kind.data.t === 'fail') hub.fail(kind.data);
        else if (kind.data.t === 'renew') hub.renew(kind.data);
        else hub.release(kind.data);
        return;
      case 'change':
        if (body === undefined || body.length > MAX_CHANGE_CHARS) {
          refused(worker, 'oversized change event');
          return;
        }
        // Passed on as it came: each worker checks it against the snapshot it names.
        for (const other of live()) if (other !== worker) send(other, message);
        return;
      case 'collected':
        metrics.collected(worker.id, kind.data.id, body);
        return;
    }
  }

  function fork(slot: Slot): void {
    slot.restart = undefined;
    const worker = cluster.fork();
    slot.worker = worker;
    slot.startedAt = Date.now();
    if (worker.process.stdout) forwardLines(worker.process.stdout, stdout);
    worker.process.stderr?.pipe(process.stderr, { end: false });
    worker.on('message', (message: unknown) => {
      try {
        receive(worker, message);
      } catch (error) {
        // A worker's bug must not take the primary, and every other worker, down.
        logger.error(
          { err: error, worker: worker.id, workerPid: worker.process.pid },
          "a worker's message failed",
        );
      }
    });
    worker.on('listening', () => {
      listened = true;
    });
    worker.on('exit', (code, signal) => exited(slot, worker, code, signal));
  }

  function exited(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    hub.workerGone(worker.id);
    metrics.workerGone(worker.id);
    if (slot.worker === worker) slot.worker = undefined;
    metrics.running(live().length);
    if (stopping) {
      if (code !== 0) exitCode = 1;
      if (slots.every((each) => each.worker === undefined)) void finish();
      return;
    }
    const exit = { worker: worker.id, workerPid: worker.process.pid, code, signal };
    if (!listened) {
      logger.fatal(exit, 'a worker exited before any listened: the replica stops');
      exitCode = 1;
      void stop('start failed');
      return;
    }
    const lived = Date.now() - slot.startedAt;
    slot.crashes = lived < STABLE_MS ? slot.crashes + 1 : 0;
    const delayMs =
      slot.crashes <= 1 ? 0 : Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (slot.crashes - 2));
    metrics.replaced(signal ? 'signal' : 'exit');
    logger.error(
      { ...exit, livedMs: lived, restartInMs: delayMs },
      'a worker exited; it is replaced',
    );
    slot.restart = setTimeout(() => fork(slot), delayMs);
  }

  let exitCode = 0;
  let finishing = false;
  async function finish(): Promise<void> {
    if (finishing) return;
    finishing = true;
    hub.close();
    logger.info({ exitCode }, 'stopped');
    await flushLogger(logger);
    stdout.flushSync();
    process.exit(exitCode);
  }

  async function stop(signal: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    logger.info(
      { signal, workers: live().length, graceMs: config.server.shutdownGraceMs },
      'shutting down every worker',
    );
    for (const slot of slots) clearTimeout(slot.restart);
    const running = slots.flatMap(({ worker }) => (worker ? [worker] : []));
    if (running.length === 0) return finish();
    for (const worker of running) worker.process.kill('SIGTERM');
    setTimeout(() => {
      const left = slots.flatMap(({ worker }) => (worker ? [worker] : []));
      logger.error(
        { workerPids: left.map((worker) => worker.process.pid) },
        'workers did not stop within SHUTDOWN_GRACE_MS: killed',
      );
      exitCode = 1;
      for (const worker of left) worker.process.kill('SIGKILL');
    }, config.server.shutdownGraceMs + CLOSE_MS).unref();
  }

  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection (the primary keeps running)');
  });
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // STATUS_PAGES_FILE is each worker's to read again.
  process.on('SIGHUP', () => {
    if (stopping) return;
    for (const { worker } of slots) worker?.process.kill('SIGHUP');
  });

  // Each worker's output comes through a pipe of its own (`forwardLines`).
  cluster.setupPrimary({ silent: true });
  logger.info(
    { workers, schedulingPolicy: cluster.schedulingPolicy === cluster.SCHED_RR ? 'rr' : 'none' },
    `starting ${workers} workers on one port`,
  );
  for (const slot of slots) fork(slot);
  metrics.running(workers);
}
