import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createJobOutcomes } from '../../../src/upstreams/verification/job-outcome.js';
import type { VerificationJobEvent } from '../../../src/upstreams/verification/job-stream.js';
import { JobWatcher, WATCH_BACK_OFF } from '../../../src/upstreams/verification/job-watcher.js';
import type { WireV2Job } from '../../../src/upstreams/verification/wire-v2.js';

/*
 * The watcher's polls on a clock the test moves (vitest's fake timers drive `setTimeout` and
 * `Date.now`): the budget over a simulated minute, the back-off, its reset and its stale ceiling,
 * counted exactly whatever else the machine is doing. The service is a function answering each
 * job's state as the test sets it.
 */

const INTERVAL_MS = 1_000;
const MAX_INTERVAL_MS = 30_000;
const STALE_INTERVAL_MS = 300_000;
const STALE_MS = 600_000;
const BUDGET = 10;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const pendingJob = (id: string, startedAt: number, extra: Partial<WireV2Job> = {}): WireV2Job => ({
  isJobCompleted: false,
  verificationId: id,
  jobStartTime: new Date(startedAt),
  jobFinishTime: null,
  compilationTime: null,
  externalVerifications: null,
  contract: null,
  error: null,
  ...extra,
});

/** A watcher over a service whose jobs are `jobs` (id → state), each poll's time recorded. */
function setUp(options: { maxPollsPerSecond?: number } = {}) {
  const jobs = new Map<string, WireV2Job>();
  const polls = new Map<string, number[]>();
  const outcomes = createJobOutcomes({ staleMs: STALE_MS, lookUp: async () => null });
  const watcher = new JobWatcher({
    intervalMs: INTERVAL_MS,
    maxIntervalMs: MAX_INTERVAL_MS,
    staleIntervalMs: STALE_INTERVAL_MS,
    maxPollsPerSecond: options.maxPollsPerSecond ?? BUDGET,
    staleMs: STALE_MS,
    fetch: async (id) => {
      polls.set(id, [...(polls.get(id) ?? []), Date.now()]);
      return jobs.get(id) ?? null;
    },
    outcomeOf: (job) => outcomes.outcomeOf(job, undefined, undefined),
    isStale: (job) => outcomes.pending(job.verificationId, job.jobStartTime, null).stale,
    logger: pino({ level: 'silent' }),
  });
  /** Watches `id`, collecting what its subscriber reads. */
  const follow = (id: string, client?: string) => {
    const events: VerificationJobEvent[] = [];
    const stream = watcher.watch(id, client);
    void (async () => {
      for await (const event of stream) events.push(event);
    })();
    return { events, stream };
  };
  const pollsOf = (id: string) => polls.get(id) ?? [];
  const total = () => [...polls.values()].reduce((sum, times) => sum + times.length, 0);
  return { jobs, watcher, follow, pollsOf, total };
}

/** Polls one unchanging job wants within `ms`, unbudgeted: at once, then pauses backing off. */
function pollsWanted(ms: number): number {
  let polls = 1;
  for (let at = 0, pause = INTERVAL_MS; at + pause <= ms; polls += 1) {
    at += pause;
    pause = Math.min(Math.round(pause * WATCH_BACK_OFF), MAX_INTERVAL_MS);
  }
  return polls;
}

const pauses = (times: readonly number[]) =>
  times.slice(1).map((time, i) => time - (times[i] ?? 0));

describe('JobWatcher', () => {
  it('polls 100 jobs that never complete, held a minute, within the budget, every one of them in turn', async () => {
    const { jobs, watcher, follow, pollsOf, total } = setUp();
    const ids = Array.from({ length: 100 }, (_, i) => `job-${i}`);
    for (const id of ids) jobs.set(id, pendingJob(id, Date.now()));
    const subscribers = ids.map((id) => follow(id));
    await vi.advanceTimersByTimeAsync(60_000);

    // Without the budget, 100 jobs backing off from 1 s would want about 950 polls in a minute.
    expect(ids.length * pollsWanted(60_000)).toBeGreaterThan(BUDGET * 60);
    // One poll every 1/BUDGET s at most, the first at once.
    expect(total()).toBeLessThanOrEqual(BUDGET * 60 + 1);
    // Earliest due first: each job got its share, none fell behind another by more than a poll.
    const counts = ids.map((id) => pollsOf(id).length);
    expect(Math.min(...counts)).toBe(Math.floor(total() / ids.length));
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    for (const { events } of subscribers) {
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        kind: 'outcome',
        outcome: { kind: 'pending', stale: false },
      });
    }
    watcher.close();
  });

  it("polls another client's job at its next turn, while one client's 100 jobs wait for the budget", async () => {
    const { jobs, watcher, follow, pollsOf, total } = setUp();
    const ids = Array.from({ length: 100 }, (_, i) => `job-${i}`);
    for (const id of [...ids, 'other']) jobs.set(id, pendingJob(id, Date.now()));
    for (const id of ids) follow(id, 'client-a');
    await vi.advanceTimersByTimeAsync(500);
    const before = total();
    const other = follow('other', 'client-b');
    await vi.advanceTimersByTimeAsync(1_000 / BUDGET);
    // The next grant is client B's, ahead of the ninety-odd polls of client A's that are due.
    expect(pollsOf('other')).toHaveLength(1);
    expect(total()).toBe(before + 1);
    expect(other.events).toHaveLength(1);
    // Each of its later polls waits for one turn at most: it is polled as its back-off wants.
    await vi.advanceTimersByTimeAsync(30_000);
    const wanted = pollsWanted(30_000);
    expect(pollsOf('other').length).toBeGreaterThanOrEqual(wanted);
    const most = Math.max(...ids.map((id) => pollsOf(id).length));
    expect(most).toBeLessThan(wanted);
    watcher.close();
  });

  it('puts a job two clients follow in the lane of the one with fewer polls queued', async () => {
    const { jobs, watcher, follow, pollsOf } = setUp();
    const ids = Array.from({ length: 100 }, (_, i) => `job-${i}`);
    for (const id of [...ids, 'shared']) jobs.set(id, pendingJob(id, Date.now()));
    for (const id of ids) follow(id, 'client-a');
    // Client A follows B's job first: its first poll waits in A's lane.
    follow('shared', 'client-a');
    follow('shared', 'client-b');
    await vi.advanceTimersByTimeAsync((ids.length + 1) * (1_000 / BUDGET));
    expect(pollsOf('shared')).toHaveLength(1);
    const firstAt = pollsOf('shared')[0] ?? 0;
    // From then on it is queued in B's lane, and polled as its back-off wants.
    await vi.advanceTimersByTimeAsync(30_000);
    const wanted = pollsWanted(30_000);
    expect(pollsOf('shared').filter((time) => time >= firstAt).length).toBeGreaterThanOrEqual(
      wanted,
    );
    watcher.close();
  });

  it('backs off while a job does not change, up to the ceiling, and polls it again after the base interval once it changes', async () => {
    const { jobs, watcher, follow, pollsOf } = setUp();
    jobs.set('job', pendingJob('job', Date.now()));
    const subscriber = follow('job');
    await vi.advanceTimersByTimeAsync(120_000);
    const growing = pauses(pollsOf('job'));
    // 1 s, then each pause 1.5 times the last (rounded), up to 30 s.
    let expected = INTERVAL_MS;
    for (const pause of growing) {
      expect(pause).toBe(expected);
      expected = Math.min(Math.round(expected * WATCH_BACK_OFF), MAX_INTERVAL_MS);
    }
    expect(growing.at(-1)).toBe(MAX_INTERVAL_MS);

    // A late subscriber gets the job as it stands at once, without a poll.
    const polled = pollsOf('job').length;
    const late = follow('job');
    await vi.advanceTimersByTimeAsync(0);
    expect(late.events).toHaveLength(1);
    expect(pollsOf('job')).toHaveLength(polled);

    // The service reports progress: the poll after the one that saw it is 1 s later.
    const before = pollsOf('job').length;
    jobs.set('job', pendingJob('job', 0, { compilationTime: '1333' }));
    await vi.advanceTimersByTimeAsync(MAX_INTERVAL_MS + INTERVAL_MS);
    const [changedAt = 0, next] = pollsOf('job').slice(before);
    expect(subscriber.events).toHaveLength(2);
    expect(next).toBe(changedAt + INTERVAL_MS);

    // It completes: its subscribers get the result and the end, and polling stops.
    jobs.set('job', pendingJob('job', 0, { isJobCompleted: true }));
    await vi.advanceTimersByTimeAsync(MAX_INTERVAL_MS);
    expect(subscriber.events.at(-1)?.last).toBe(true);
    const stopped = pollsOf('job').length;
    await vi.advanceTimersByTimeAsync(10 * MAX_INTERVAL_MS);
    expect(pollsOf('job')).toHaveLength(stopped);
    watcher.close();
  });

  it('polls a running job when it turns stale, then at most every stale interval', async () => {
    const { jobs, watcher, follow, pollsOf } = setUp();
    const startedAt = Date.now();
    jobs.set('job', pendingJob('job', startedAt));
    const subscriber = follow('job');
    await vi.advanceTimersByTimeAsync(STALE_MS + 1);
    // Reported stale as it turns so, not at the next backed-off poll.
    expect(pollsOf('job').at(-1)).toBe(startedAt + STALE_MS + 1);
    expect(
      subscriber.events.map(
        (event) =>
          event.kind === 'outcome' && event.outcome.kind === 'pending' && event.outcome.stale,
      ),
    ).toEqual([false, true]);
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    const stalePauses = pauses(pollsOf('job').filter((time) => time > startedAt + STALE_MS));
    expect(Math.max(...stalePauses)).toBe(STALE_INTERVAL_MS);
    expect(stalePauses.at(-1)).toBe(STALE_INTERVAL_MS);
    // No change after turning stale: nothing more sent.
    expect(subscriber.events).toHaveLength(2);
    watcher.close();
  });
});

describe('JobWatcher, when subscribers leave', () => {
  it('keeps the back-off of a job whose subscriber comes back, and gives it the state at once', async () => {
    const { jobs, watcher, follow, pollsOf } = setUp();
    jobs.set('job', pendingJob('job', Date.now()));
    const first = follow('job');
    await vi.advanceTimersByTimeAsync(20_000);
    const backedOff = pauses(pollsOf('job')).at(-1) ?? 0;
    expect(backedOff).toBeGreaterThan(INTERVAL_MS);
    await first.stream.return();
    const polled = pollsOf('job').length;
    const again = follow('job');
    await vi.advanceTimersByTimeAsync(0);
    expect(again.events).toHaveLength(1);
    expect(pollsOf('job')).toHaveLength(polled);
    await vi.advanceTimersByTimeAsync(2 * MAX_INTERVAL_MS);
    // The pauses went on growing from where they were.
    expect(Math.min(...pauses(pollsOf('job').slice(polled - 1)))).toBeGreaterThan(backedOff);
    watcher.close();
  });

  it('drops the polls of jobs nobody follows any more without spending the budget on them', async () => {
    const { jobs, watcher, follow, pollsOf, total } = setUp();
    const ids = Array.from({ length: 100 }, (_, i) => `job-${i}`);
    for (const id of [...ids, 'other']) jobs.set(id, pendingJob(id, Date.now()));
    const left = ids.map((id) => follow(id));
    await vi.advanceTimersByTimeAsync(1_000);
    const polledBefore = total();
    await Promise.all(left.map(({ stream }) => stream.return()));
    const other = follow('other');
    await vi.advanceTimersByTimeAsync(1_000 / BUDGET);
    // The next grant is the other job's: the queued polls of the others were dropped.
    expect(pollsOf('other')).toHaveLength(1);
    expect(other.events).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10 * MAX_INTERVAL_MS);
    expect(total() - pollsOf('other').length).toBe(polledBefore);
    watcher.close();
  });
});
