import { type HeapItem, IndexedHeap } from './indexed-heap.js';

/** What the scheduler reports, for the metrics. */
export interface PollSchedulerObserver {
  /** Polls due now and held back by the budget, after each round of grants. */
  readonly waiting?: (count: number) => void;
  /** A poll granted `seconds` after its due time. */
  readonly granted?: (seconds: number) => void;
}

export interface PollSchedulerOptions {
  /** `VERIFY_WATCH_MAX_POLLS_PER_SECOND`: polls granted per second at most, evenly spaced. */
  readonly maxPerSecond: number;
  readonly observer?: PollSchedulerObserver | undefined;
}

/** One poller's place in the scheduler: queued for a time, or not queued. */
export interface PollTurn {
  /**
   * Queues (or moves) the poll `ms` from now, in lane `lane` (the client it is for); it runs then,
   * or when granted after.
   */
  after(ms: number, lane?: string): void;
  /** Takes the poll out of the queue; `after` queues it again. */
  cancel(): void;
}

interface Entry extends HeapItem {
  /** Polls, or answers false when there was nothing to poll: the grant goes to the next. */
  readonly run: () => boolean;
  due: number;
  /** Which of two entries due at once was queued first: it goes first. */
  order: number;
  lane: Lane | undefined;
}

interface Lane extends HeapItem {
  readonly key: string;
  readonly entries: IndexedHeap<Entry>;
  /** Its place in the round: the lane with the lowest goes next. */
  tag: number;
  /** Whether it is in the round (its first poll was due), else waiting for its first poll's time. */
  ready: boolean;
}

const earlier = (a: Entry, b: Entry) => a.due < b.due || (a.due === b.due && a.order < b.order);
const firstDue = (lane: Lane) => lane.entries.peek()?.due ?? Number.POSITIVE_INFINITY;

/**
 * Grants polls within one budget for all the pollers of a replica: at most `maxPerSecond`, one
 * every 1/`maxPerSecond` s (a token bucket holding one token, so that no burst follows a quiet
 * spell: in any `t` seconds, at most `1 + maxPerSecond × t` polls).
 *
 * Fair between lanes (clients), then between a lane's polls: the lanes with a poll due take turns
 * (start-time fair queuing: a lane joining the round starts at the turn being served, so it gets
 * no credit for the time it had nothing due), and within a lane the poll due longest goes first.
 * So one client's many jobs cannot hold another client's poll back for more than one turn of the
 * lanes with polls due: with `c` such lanes a poll waits at most about `c / maxPerSecond` s past
 * its time, and with `n` polls queued at most `n / maxPerSecond` s whatever the lanes (each poll
 * queued before it is granted at most once before it: a granted poller queues again later).
 *
 * A binary heap per lane and two of lanes (waiting by their first poll's time, in the round by
 * turn), and one timer, whatever the number of pollers. Times are the monotonic clock's: a wall
 * clock set back does not hold polls up.
 */
export class PollScheduler {
  readonly #spacingMs: number;
  readonly #observer: PollSchedulerObserver | undefined;
  readonly #lanes = new Map<string, Lane>();
  readonly #waiting = new IndexedHeap<Lane>((a, b) => firstDue(a) < firstDue(b));
  readonly #round = new IndexedHeap<Lane>(
    (a, b) => a.tag < b.tag || (a.tag === b.tag && firstDue(a) < firstDue(b)),
  );
  /** The turn being served: the tag of the lane granted last. */
  #turn = 0;
  /** When the next grant may be made. */
  #nextGrantAt = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #order = 0;
  #closed = false;

  constructor({ maxPerSecond, observer }: PollSchedulerOptions) {
    this.#spacingMs = 1000 / maxPerSecond;
    this.#observer = observer;
  }

  /** Polls queued in lane `key`, due or not. */
  queuedIn(key: string): number {
    return this.#lanes.get(key)?.entries.size ?? 0;
  }

  /**
   * A place for `run`, not queued yet. `run` polls when granted, or answers false if there is
   * nothing to poll after all (no grant is spent on it).
   */
  turn(run: () => boolean): PollTurn {
    const entry: Entry = { run, due: 0, order: 0, lane: undefined, heapIndex: -1 };
    return {
      after: (ms, key = '') => {
        if (this.#closed) return;
        this.#take(entry);
        entry.due = performance.now() + Math.max(0, ms);
        entry.order = this.#order++;
        const lane = this.#laneOf(key);
        entry.lane = lane;
        lane.entries.push(entry);
        this.#place(lane);
        this.#arm();
      },
      cancel: () => this.#take(entry),
    };
  }

  /** Grants nothing more. */
  close(): void {
    this.#closed = true;
    this.#disarm();
    for (const lane of this.#lanes.values()) lane.entries.clear();
    this.#lanes.clear();
    this.#waiting.clear();
    this.#round.clear();
  }

  #laneOf(key: string): Lane {
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { key, entries: new IndexedHeap(earlier), tag: 0, ready: false, heapIndex: -1 };
      this.#lanes.set(key, lane);
    }
    return lane;
  }

  #take(entry: Entry): void {
    const { lane } = entry;
    if (!lane) return;
    lane.entries.remove(entry);
    entry.lane = undefined;
    this.#place(lane);
  }

  /** Puts a lane where its polls say: gone when it has none, else waiting or in the round. */
  #place(lane: Lane): void {
    if (lane.entries.size === 0) {
      (lane.ready ? this.#round : this.#waiting).remove(lane);
      this.#lanes.delete(lane.key);
      return;
    }
    if (lane.ready) this.#round.update(lane);
    else if (this.#waiting.has(lane)) this.#waiting.update(lane);
    else this.#waiting.push(lane);
  }

  /** Grants what is due within the budget, then waits for the next grant. */
  #pump(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    try {
      // Lanes whose first poll is due join the round at the turn being served.
      for (let lane = this.#waiting.peek(); lane && firstDue(lane) <= now; ) {
        this.#waiting.remove(lane);
        lane.tag = Math.max(lane.tag, this.#turn);
        lane.ready = true;
        this.#round.push(lane);
        lane = this.#waiting.peek();
      }
      // One grant at a time: a grant missed while the timer was late is not made up later.
      for (let lane = this.#round.peek(); lane && this.#nextGrantAt <= now; ) {
        const entry = lane.entries.peek();
        if (!entry || entry.due > now) {
          // Its due poll was taken out: it waits for its next one.
          this.#round.remove(lane);
          lane.ready = false;
          this.#place(lane);
        } else {
          this.#take(entry);
          if (entry.run()) {
            this.#nextGrantAt = now + this.#spacingMs;
            this.#turn = lane.tag;
            lane.tag += 1;
            this.#round.update(lane);
            this.#observer?.granted?.((now - entry.due) / 1000);
          }
        }
        lane = this.#round.peek();
      }
    } finally {
      this.#settle(now);
    }
  }

  /** Reports the polls left waiting and waits for the next grant. */
  #settle(now: number): void {
    if (this.#observer?.waiting) {
      let due = 0;
      for (const lane of this.#round.values()) {
        due += lane.entries.countWhile((entry) => entry.due <= now);
      }
      this.#observer.waiting(due);
    }
    this.#arm();
  }

  #arm(): void {
    if (this.#closed) return;
    // With lanes in the round, at the next grant; else at the first poll due of those waiting.
    const lane = this.#waiting.peek();
    const due = this.#round.size > 0 ? Number.NEGATIVE_INFINITY : lane && firstDue(lane);
    if (due === undefined) {
      this.#disarm();
      return;
    }
    const at = Math.max(due, this.#nextGrantAt);
    if (at >= this.#timerAt) return;
    this.#disarm();
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#pump(), Math.max(0, Math.ceil(at - performance.now())));
  }

  #disarm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }
}
