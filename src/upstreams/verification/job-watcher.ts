import type { Logger } from 'pino';
import { ExpectedError } from '../../errors/expected-error.js';
import { InvalidInputError } from '../../errors/invalid-input-error.js';
import { RedisUnavailableError } from '../../errors/redis-unavailable-error.js';
import { JobStream, type VerificationJobEvent } from './job-stream.js';
import type { VerificationOutcome } from './model.js';
import type { RedisJobPolls } from './redis-job-polls.js';
import type { WireV2Job } from './wire-v2.js';

/** What one poll of a job gave: the job (null: the service knows no such job), or a failure. */
export type JobPoll = { readonly job: WireV2Job | null } | { readonly failure: ExpectedError };

export interface JobWatcherOptions {
  /** `VERIFY_WATCH_INTERVAL_MS`: the time between two polls of a job. */
  readonly intervalMs: number;
  /** Asks the service for the job: null when it knows none; rejects with an `ExpectedError`. */
  readonly fetch: (id: string) => Promise<WireV2Job | null>;
  /** What a job means for its subscribers; rejects with the error a failed job stands for. */
  readonly outcomeOf: (job: WireV2Job) => Promise<VerificationOutcome>;
  /** Whether a job still running is stale now: it is a change when it becomes so. */
  readonly isStale: (job: WireV2Job) => boolean;
  /** Shares each poll with the other replicas; without it, or failing, this replica polls alone. */
  readonly sharing?: Pick<RedisJobPolls, 'poll'> | undefined;
  readonly logger: Pick<Logger, 'warn'>;
}

/** How soon a replica looks again when another replica polls and has stored nothing yet. */
const FOLLOW_RETRY_MS = 100;

interface Watch {
  readonly id: string;
  readonly streams: Set<JobStream>;
  /** What was sent last, and the state it was made from. */
  last: { readonly key: string; readonly event: VerificationJobEvent } | undefined;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Follows APIv2 jobs for `verificationJobChanged`: one poll per job per interval, whoever watches
 * it. All the subscribers of a job on this replica share its watch (its polls, and each event
 * object, so that they share its execution too); with `sharing`, the replicas share each poll.
 * A subscriber gets the job's state at once (the last one sent, or the first poll's), then each
 * change: a new state at the service, or a pending job turning stale; after a completed state (or
 * "no such job") its stream ends. A failed poll is no change, unless nothing was sent yet: then the
 * failure is sent, and polling goes on.
 */
export class JobWatcher {
  readonly #options: JobWatcherOptions;
  readonly #watches = new Map<string, Watch>();
  #closed = false;

  constructor(options: JobWatcherOptions) {
    this.#options = options;
  }

  /** The job's events, from its state now; `id` must be checked (a job id) beforehand. */
  watch(id: string): JobStream {
    const existing = this.#watches.get(id);
    const watch: Watch = existing ?? { id, streams: new Set(), last: undefined, timer: undefined };
    const stream = new JobStream(() => {
      watch.streams.delete(stream);
      if (watch.streams.size === 0) this.#stop(watch);
    });
    if (this.#closed) {
      stream.end();
      return stream;
    }
    watch.streams.add(stream);
    if (watch.last) stream.push(watch.last.event);
    if (!existing) {
      this.#watches.set(id, watch);
      void this.#poll(watch);
    }
    return stream;
  }

  /** Ends every watch: their subscribers get what is queued, then the end. */
  close(): void {
    this.#closed = true;
    for (const watch of [...this.#watches.values()]) {
      for (const stream of [...watch.streams]) stream.end();
      this.#stop(watch);
    }
  }

  #stop(watch: Watch): void {
    clearTimeout(watch.timer);
    watch.timer = undefined;
    if (this.#watches.get(watch.id) === watch) this.#watches.delete(watch.id);
  }

  #isWatched(watch: Watch): boolean {
    return this.#watches.get(watch.id) === watch && watch.streams.size > 0;
  }

  async #poll(watch: Watch): Promise<void> {
    const { intervalMs, sharing } = this.#options;
    let next = intervalMs;
    try {
      const fetch = () => this.#fetch(watch.id);
      let poll: JobPoll | undefined;
      try {
        poll = sharing ? await sharing.poll(watch.id, fetch) : await fetch();
      } catch (error) {
        if (!(error instanceof RedisUnavailableError)) throw error;
        // The replicas cannot share this poll: poll alone.
        poll = await fetch();
      }
      if (poll === undefined) next = Math.min(intervalMs, FOLLOW_RETRY_MS);
      else await this.#hand(watch, poll);
    } catch (error) {
      this.#options.logger.warn({ err: error, job: watch.id }, 'verification job watch failed');
    }
    if (this.#isWatched(watch)) {
      watch.timer = setTimeout(() => void this.#poll(watch), next);
    }
  }

  async #fetch(id: string): Promise<JobPoll> {
    try {
      return { job: await this.#options.fetch(id) };
    } catch (error) {
      if (error instanceof ExpectedError) return { failure: error };
      throw error;
    }
  }

  /** Sends the poll's state to the job's subscribers if it differs from the last one sent. */
  async #hand(watch: Watch, poll: JobPoll): Promise<void> {
    if ('failure' in poll) {
      const { failure: error } = poll;
      if (watch.last) return;
      this.#send(watch, `failure:${error.code}`, { kind: 'error', error, last: false });
      return;
    }
    const { job } = poll;
    if (job === null) {
      this.#send(watch, 'unknown', {
        kind: 'error',
        error: new InvalidInputError(
          'id',
          'The verification service has no job with this id (it may have been forgotten, or never existed).',
        ),
        last: true,
      });
      return;
    }
    const key = `${JSON.stringify(job)}|${!job.isJobCompleted && this.#options.isStale(job)}`;
    if (watch.last?.key === key) return;
    let event: VerificationJobEvent;
    try {
      event = {
        kind: 'outcome',
        outcome: await this.#options.outcomeOf(job),
        last: job.isJobCompleted,
      };
    } catch (error) {
      if (!(error instanceof ExpectedError)) throw error;
      event = { kind: 'error', error, last: job.isJobCompleted };
    }
    this.#send(watch, key, event);
  }

  #send(watch: Watch, key: string, event: VerificationJobEvent): void {
    watch.last = { key, event };
    for (const stream of [...watch.streams]) stream.push(event);
    if (event.last) this.#stop(watch);
  }
}
