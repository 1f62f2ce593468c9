import type { Logger } from 'pino';
import { ExpectedError } from '../../errors/expected-error.js';
import { InvalidInputError } from '../../errors/invalid-input-error.js';
import { RedisUnavailableError } from '../../errors/redis-unavailable-error.js';
import { JobStream, type VerificationJobEvent } from './job-stream.js';
import type { VerificationOutcome } from './model.js';
import { PollScheduler, type PollTurn } from './poll-scheduler.js';
import type { RedisJobPolls } from './redis-job-polls.js';
import type { WireV2Job } from './wire-v2.js';

/** What one poll of a job gave: the job (null: the service knows no such job), or a failure. */
export type JobPoll = { readonly job: WireV2Job | null } | { readonly failure: ExpectedError };

/** What the watcher reports, for the metrics. */
export interface JobWatchObserver {
  /** Jobs watched on this replica now (a watch whose subscribers left lasts until its next poll). */
  jobsWatched(count: number): void;
  /** Watched jobs whose poll is due and held back by `VERIFY_WATCH_MAX_POLLS_PER_SECOND`. */
  jobPollsWaiting(count: number): void;
  /** A poll of a watched job was started, `seconds` after it was due. */
  jobPollStarted(seconds: number): void;
}

export interface JobWatcherOptions {
  /** `VERIFY_WATCH_INTERVAL_MS`: the first pause between polls of a job, and the pause after it changes. */
  readonly intervalMs: number;
  /** `VERIFY_WATCH_MAX_INTERVAL_MS`: the longest pause between polls of a job running in time. */
  readonly maxIntervalMs: number;
  /** `VERIFY_WATCH_STALE_INTERVAL_MS`: the longest pause between polls of a stale job. */
  readonly staleIntervalMs: number;
  /** `VERIFY_WATCH_MAX_POLLS_PER_SECOND`: polls of all the watched jobs together, at most. */
  readonly maxPollsPerSecond: number;
  /**
   * `VERIFY_JOB_STALE_MS`: a running job is polled again when it turns stale (this long after its
   * start, `isStale` deciding), so that its subscribers hear of it then, not a long pause later.
   */
  readonly staleMs: number;
  /** Asks the service for the job: null when it knows none; rejects with an `ExpectedError`. */
  readonly fetch: (id: string) => Promise<WireV2Job | null>;
  /** What a job means for its subscribers; rejects with the error a failed job stands for. */
  readonly outcomeOf: (job: WireV2Job) => Promise<VerificationOutcome>;
  /** Whether a job still running is stale now: it is a change when it becomes so. */
  readonly isStale: (job: WireV2Job) => boolean;
  /** Shares each poll with the other replicas; without it, or failing, this replica polls alone. */
  readonly sharing?: Pick<RedisJobPolls, 'poll'> | undefined;
  readonly observer?: JobWatchObserver | undefined;
  readonly logger: Pick<Logger, 'warn'>;
}

/** How soon a replica looks again when another replica polls and has stored nothing yet. */
const FOLLOW_RETRY_MS = 100;

/**
 * How much longer each pause is than the last while a job does not change, as
 * `VERIFY_POLL_INTERVAL_MS`'s pauses grow: a job that completes after `t` of watching is reported
 * at most about `t / 2` late (the pauses so far add up to twice the next one), up to the ceiling.
 */
export const WATCH_BACK_OFF = 1.5;

interface Watch {
  readonly id: string;
  /** Each subscriber's stream, and the client it is for. */
  readonly streams: Map<JobStream, string>;
  /** The client whose lane of the budget its poll was queued in last. */
  client: string;
  /** What was sent last: the service's state (or failure) it was made from, and whether stale. */
  last:
    | { readonly state: string; readonly stale: boolean; readonly event: VerificationJobEvent }
    | undefined;
  /** The pause before the next poll if the job does not change meanwhile. */
  intervalMs: number;
  /** When the running job turns stale (ms), while it is not yet. */
  staleAt: number | undefined;
  readonly turn: PollTurn;
}

/**
 * Follows APIv2 jobs for `verificationJobChanged`. All the subscribers of a job on this replica
 * share its watch (its polls, and each event object, so that they share its execution too); with
 * `sharing`, the replicas share each poll. A subscriber gets the job's state at once (the last one
 * sent, or the first poll's), then each change: a new state at the service, or a pending job
 * turning stale; after a completed state (or "no such job") its stream ends. A failed poll is no
 * change, unless nothing was sent yet: then the failure is sent, and polling goes on.
 *
 * A job is polled at once, then after `intervalMs`, each pause `WATCH_BACK_OFF` times the last
 * while it does not change, up to `maxIntervalMs` (`staleIntervalMs` once stale), and after
 * `intervalMs` again when it changes; a running job is polled when it turns stale. One
 * `PollScheduler` grants every watch's polls, at most `maxPollsPerSecond`, the clients taking
 * turns and each client's longest due first.
 * A watch nobody subscribes to any more ends when its next poll is due, unpolled.
 */
export class JobWatcher {
  readonly #options: JobWatcherOptions;
  readonly #watches = new Map<string, Watch>();
  readonly #scheduler: PollScheduler;
  #closed = false;

  constructor(options: JobWatcherOptions) {
    this.#options = options;
    const { observer } = options;
    this.#scheduler = new PollScheduler({
      maxPerSecond: options.maxPollsPerSecond,
      observer: observer && {
        waiting: (count) => observer.jobPollsWaiting(count),
        granted: (seconds) => observer.jobPollStarted(seconds),
      },
    });
  }

  /**
   * The job's events, from its state now, for `client` (its address: whose share of the budget
   * its polls take); `id` must be checked (a job id) beforehand.
   */
  watch(id: string, client = ''): JobStream {
    const existing = this.#watches.get(id);
    const watch = existing ?? this.#watchOf(id, client);
    // A watch whose last subscriber leaves is kept until its next poll is due, and dropped then
    // unpolled: a subscriber who comes back meanwhile gets its state at once and keeps its
    // back-off, so unsubscribing and subscribing again does not make a job polled sooner.
    const stream = new JobStream(() => watch.streams.delete(stream));
    if (this.#closed) {
      stream.end();
      return stream;
    }
    watch.streams.set(stream, client);
    if (watch.last) stream.push(watch.last.event);
    if (!existing) {
      this.#watches.set(id, watch);
      this.#options.observer?.jobsWatched(this.#watches.size);
      watch.turn.after(0, client);
    }
    return stream;
  }

  /** Ends every watch: their subscribers get what is queued, then the end. */
  close(): void {
    this.#closed = true;
    this.#scheduler.close();
    for (const watch of [...this.#watches.values()]) {
      for (const stream of [...watch.streams.keys()]) stream.end();
      this.#stop(watch);
    }
  }

  #watchOf(id: string, client: string): Watch {
    const watch: Watch = {
      id,
      streams: new Map(),
      client,
      last: undefined,
      intervalMs: this.#options.intervalMs,
      staleAt: undefined,
      turn: this.#scheduler.turn(() => {
        if (watch.streams.size === 0) {
          this.#stop(watch);
          return false;
        }
        void this.#poll(watch);
        return true;
      }),
    };
    return watch;
  }

  #stop(watch: Watch): void {
    watch.turn.cancel();
    if (this.#watches.get(watch.id) !== watch) return;
    this.#watches.delete(watch.id);
    this.#options.observer?.jobsWatched(this.#watches.size);
  }

  async #poll(watch: Watch): Promise<void> {
    const { intervalMs, sharing } = this.#options;
    /** The pause before the next poll, when it is not the back-off's. */
    let next: number | undefined;
    try {
      const fetch = () => this.#fetch(watch.id);
      let poll: JobPoll | undefined;
      try {
        // Leased until this replica's next poll if the job does not change: the others read
        // this one meanwhile (a change lets this replica poll again within its lease).
        poll = sharing ? await sharing.poll(watch.id, fetch, this.#longer(watch)) : await fetch();
      } catch (error) {
        if (!(error instanceof RedisUnavailableError)) throw error;
        // The replicas cannot share this poll: poll alone.
        poll = await fetch();
      }
      if (poll === undefined) next = Math.min(intervalMs, FOLLOW_RETRY_MS);
      else if (await this.#hand(watch, poll)) watch.intervalMs = intervalMs;
      else this.#backOff(watch);
    } catch (error) {
      this.#options.logger.warn({ err: error, job: watch.id }, 'verification job watch failed');
      this.#backOff(watch);
    }
    if (this.#watches.get(watch.id) !== watch) return;
    const untilStale = (watch.staleAt ?? Number.POSITIVE_INFINITY) - Date.now();
    next ??= Math.min(watch.intervalMs, untilStale > 0 ? untilStale : Number.POSITIVE_INFINITY);
    watch.turn.after(next, this.#clientOf(watch));
  }

  /**
   * Whose lane a job's next poll goes in: of its subscribers' clients, the one with the fewest
   * polls queued, so that a client following another's job does not draw it into its own crowd.
   */
  #clientOf(watch: Watch): string {
    let fewest = Number.POSITIVE_INFINITY;
    for (const client of new Set(watch.streams.values())) {
      const queued = this.#scheduler.queuedIn(client);
      if (queued < fewest) {
        fewest = queued;
        watch.client = client;
      }
    }
    return watch.client;
  }

  /** The job did not change: the next pause is longer, up to the ceiling. */
  #backOff(watch: Watch): void {
    watch.intervalMs = this.#longer(watch);
  }

  /** The pause after the next poll if the job does not change. */
  #longer(watch: Watch): number {
    const { maxIntervalMs, staleIntervalMs } = this.#options;
    const ceiling = watch.last?.stale ? staleIntervalMs : maxIntervalMs;
    return Math.min(Math.round(watch.intervalMs * WATCH_BACK_OFF), ceiling);
  }

  async #fetch(id: string): Promise<JobPoll> {
    try {
      return { job: await this.#options.fetch(id) };
    } catch (error) {
      if (error instanceof ExpectedError) return { failure: error };
      throw error;
    }
  }

  /**
   * Sends the poll's state to the job's subscribers if it differs from the last one sent; true
   * when the service's state changed (or is the first one).
   */
  async #hand(watch: Watch, poll: JobPoll): Promise<boolean> {
    if ('failure' in poll) {
      const { failure: error } = poll;
      if (watch.last) return false;
      this.#send(watch, `failure:${error.code}`, false, { kind: 'error', error, last: false });
      return true;
    }
    const { job } = poll;
    if (job === null) {
      this.#send(watch, 'unknown', false, {
        kind: 'error',
        error: new InvalidInputError(
          'id',
          'The verification service has no job with this id (it may have been forgotten, or never existed).',
        ),
        last: true,
      });
      return true;
    }
    const state = JSON.stringify(job);
    const stale = !job.isJobCompleted && this.#options.isStale(job);
    watch.staleAt =
      job.isJobCompleted || stale || job.jobStartTime === null
        ? undefined
        : job.jobStartTime.getTime() + this.#options.staleMs + 1;
    const changed = watch.last?.state !== state;
    if (!changed && watch.last?.stale === stale) return false;
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
    this.#send(watch, state, stale, event);
    return changed;
  }

  #send(watch: Watch, state: string, stale: boolean, event: VerificationJobEvent): void {
    watch.last = { state, stale, event };
    for (const stream of [...watch.streams.keys()]) stream.push(event);
    if (event.last) this.#stop(watch);
  }
}
