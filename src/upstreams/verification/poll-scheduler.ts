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
  /** Queues (or moves) the poll `ms` from now; it runs then, or when granted after. */
  after(ms: number): void;
  /** Takes the poll out of the queue; `at` queues it again. */
  cancel(): void;
}

interface Entry {
  /** Polls, or answers false when there was nothing to poll: the grant goes to the next. */
  readonly run: () => boolean;
  due: number;
  /** Which of two entries due at once was queued first: it goes first. */
  order: number;
  /** Its place in the heap, -1 when not queued. */
  index: number;
}

/**
 * Grants polls within one budget for all the pollers of a replica: at most `maxPerSecond`, one
 * every 1/`maxPerSecond` s (a token bucket holding one token, so that no burst follows a quiet
 * spell: in any `t` seconds, at most `1 + maxPerSecond × t` polls), earliest due first. A poll
 * waits at most for those due before it, each of which is granted once before it (a granted
 * poller queues again later than now): with `n` queued, at most about `n / maxPerSecond` s past
 * its time. The queue is a binary heap and there is one timer, whatever the number of pollers.
 * Times are the monotonic clock's: a wall clock set back does not hold polls up.
 */
export class PollScheduler {
  readonly #spacingMs: number;
  readonly #observer: PollSchedulerObserver | undefined;
  readonly #heap: Entry[] = [];
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

  /**
   * A place for `run`, not queued yet. `run` polls when granted, or answers false if there is
   * nothing to poll after all (no grant is spent on it).
   */
  turn(run: () => boolean): PollTurn {
    const entry: Entry = { run, due: 0, order: 0, index: -1 };
    return {
      after: (ms) => {
        if (this.#closed) return;
        if (entry.index >= 0) this.#remove(entry);
        entry.due = performance.now() + Math.max(0, ms);
        entry.order = this.#order++;
        this.#insert(entry);
        this.#arm();
      },
      cancel: () => {
        if (entry.index < 0) return;
        this.#remove(entry);
        if (this.#heap.length === 0) this.#disarm();
      },
    };
  }

  /** Grants nothing more. */
  close(): void {
    this.#closed = true;
    this.#disarm();
    for (const entry of this.#heap) entry.index = -1;
    this.#heap.length = 0;
  }

  /** Grants what is due within the budget, then waits for the next grant. */
  #pump(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    try {
      // One grant at a time: a grant missed while the timer was late is not made up later.
      for (let top = this.#heap[0]; top && top.due <= now && this.#nextGrantAt <= now; ) {
        this.#remove(top);
        if (top.run()) {
          this.#nextGrantAt = now + this.#spacingMs;
          this.#observer?.granted?.((now - top.due) / 1000);
        }
        top = this.#heap[0];
      }
    } finally {
      this.#settle(now);
    }
  }

  /** Reports the polls left waiting and waits for the next grant. */
  #settle(now: number): void {
    if (this.#observer?.waiting) this.#observer.waiting(this.#dueCount(now));
    this.#arm();
  }

  #arm(): void {
    const top = this.#heap[0];
    if (!top || this.#closed) return;
    const at = Math.max(top.due, this.#nextGrantAt);
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

  /** Entries due at `now`: the heap's top part, so only they are visited. */
  #dueCount(now: number, index = 0): number {
    const entry = this.#heap[index];
    if (!entry || entry.due > now) return 0;
    return 1 + this.#dueCount(now, 2 * index + 1) + this.#dueCount(now, 2 * index + 2);
  }

  #before(a: Entry, b: Entry): boolean {
    return a.due < b.due || (a.due === b.due && a.order < b.order);
  }

  #insert(entry: Entry): void {
    entry.index = this.#heap.length;
    this.#heap.push(entry);
    this.#up(entry.index);
  }

  #remove(entry: Entry): void {
    const { index } = entry;
    const last = this.#heap.pop() as Entry;
    entry.index = -1;
    if (last === entry) return;
    this.#heap[index] = last;
    last.index = index;
    this.#up(index);
    this.#down(last.index);
  }

  #up(from: number): void {
    let index = from;
    const entry = this.#heap[index] as Entry;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.#heap[parentIndex] as Entry;
      if (!this.#before(entry, parent)) break;
      this.#heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    this.#heap[index] = entry;
    entry.index = index;
  }

  #down(from: number): void {
    let index = from;
    const entry = this.#heap[index] as Entry;
    const { length } = this.#heap;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const rightEntry = this.#heap[right];
      const child =
        rightEntry && this.#before(rightEntry, this.#heap[left] as Entry) ? right : left;
      const childEntry = this.#heap[child] as Entry;
      if (!this.#before(childEntry, entry)) break;
      this.#heap[index] = childEntry;
      childEntry.index = index;
      index = child;
    }
    this.#heap[index] = entry;
    entry.index = index;
  }
}
