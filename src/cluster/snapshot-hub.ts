import type {
  AcquireAnswer,
  AcquireAsk,
  ConfirmAsk,
  FailTell,
  ReadAnswer,
  ReleaseTell,
  RenewTell,
  StoreAsk,
} from './messages.js';

/*
 * What Redis is to replicas, the primary is to its workers: per status document it keeps the last
 * stored snapshot (the upstream's validated document as JSON, with its fetch time, version and
 * validators), the lock of the worker fetching it now, and the last failed fetch. Workers ask it
 * through `ClusterSnapshotStore`; it never fetches or parses a document itself.
 *
 * Unlike Redis it knows its clients: a worker waiting for another's fetch is answered when that
 * fetch ends (no polling), and a worker that exits lets go of its locks at once.
 */

interface Stored {
  readonly version: string;
  fetchedAt: number;
  readonly body: string;
  readonly etag?: string | undefined;
  readonly lastModified?: string | undefined;
  expiresAt: number;
}

interface Lock {
  readonly token: string;
  readonly worker: number;
  expiresAt: number;
}

interface Failure {
  readonly token: string;
  readonly code: FailTell['code'];
  readonly status?: number | undefined;
  readonly at: number;
  readonly expiresAt: number;
}

interface Waiter {
  readonly worker: number;
  readonly ask: AcquireAsk;
  readonly deadline: number;
  /** The token of the lock it waits for: that fetch's failure is answered to it. */
  readonly waitedFor: string;
  readonly answer: (answer: AcquireAnswer, body?: string) => void;
}

interface Document {
  stored?: Stored | undefined;
  lock?: Lock | undefined;
  failure?: Failure | undefined;
  readonly waiters: Waiter[];
  timer?: NodeJS.Timeout | undefined;
}

export interface SnapshotHubOptions {
  /**
   * What the stored documents may hold together, in characters of their JSON: past it the
   * documents stored longest ago are dropped (the next worker to need one fetches it).
   */
  readonly maxChars: number;
  /** Told of every snapshot stored or confirmed, for the workers' notices. */
  readonly notify: (name: string, version: string, fetchedAt: number) => void;
  /** @default Date.now */
  readonly now?: () => number;
}

/** How often expired snapshots, locks and failures are let go of when nobody asks for them. */
const SWEEP_MS = 10_000;

/** The documents of a replica's workers, kept by the primary: see above. */
export class SnapshotHub {
  readonly #options: SnapshotHubOptions;
  readonly #now: () => number;
  /** By name; a document's stored snapshot counts in `#chars`. */
  readonly #documents = new Map<string, Document>();
  /** The names of the stored snapshots, oldest store first: what is dropped past `maxChars`. */
  readonly #storeOrder = new Set<string>();
  #chars = 0;
  readonly #sweep: NodeJS.Timeout;

  constructor(options: SnapshotHubOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#sweep = setInterval(() => this.#sweepAll(), SWEEP_MS);
    this.#sweep.unref();
  }

  /** The characters of the stored documents: a test's window on the bound. */
  get storedChars(): number {
    return this.#chars;
  }

  read(name: string, known: string): { answer: ReadAnswer; body?: string } {
    const document = this.#documents.get(name);
    if (document) this.#expire(name, document);
    const stored = document?.stored;
    if (!stored) return { answer: { found: false } };
    return {
      answer: { found: true, ...stampOf(stored) },
      ...(stored.version === known ? {} : { body: stored.body }),
    };
  }

  /**
   * Answers at once with a failure to report, a newer stored snapshot, or the lock; while another
   * worker holds the lock, when its fetch ends (or at `waitMs`: `timeout`, and the worker fetches
   * alone).
   */
  acquire(
    worker: number,
    ask: AcquireAsk,
    answer: (answer: AcquireAnswer, body?: string) => void,
  ): void {
    const document = this.#document(ask.name);
    const waiter: Waiter = {
      worker,
      ask,
      deadline: this.#now() + ask.waitMs,
      waitedFor: '',
      answer,
    };
    if (!this.#settle(ask.name, document, waiter)) {
      document.waiters.push({ ...waiter, waitedFor: document.lock?.token ?? '' });
      this.#schedule(ask.name, document);
    }
  }

  /** Stores a snapshot unless a newer one is there; clears the failure; tells the workers. */
  store(ask: StoreAsk, body: string): boolean {
    const { name, token, fetchedAt, retainMs, etag, lastModified } = ask;
    const document = this.#document(name);
    this.#expire(name, document);
    if (document.stored && document.stored.fetchedAt > fetchedAt) return false;
    if (body.length > this.#options.maxChars) return false;
    this.#drop(name, document);
    document.stored = {
      version: token,
      fetchedAt,
      body,
      etag,
      lastModified,
      expiresAt: this.#now() + retainMs,
    };
    this.#chars += body.length;
    this.#storeOrder.add(name);
    for (const oldest of this.#storeOrder) {
      if (this.#chars <= this.#options.maxChars) break;
      const dropped = this.#documents.get(oldest);
      if (dropped) this.#drop(oldest, dropped);
    }
    document.failure = undefined;
    this.#options.notify(name, token, fetchedAt);
    this.#wake(name, document);
    return true;
  }

  /**
   * Moves the stored snapshot's fetch time on (never back) when it is still `version`, which the
   * upstream has just called unchanged; false when another version, or none, is stored.
   */
  confirm({ name, version, fetchedAt, retainMs }: ConfirmAsk): boolean {
    const document = this.#documents.get(name);
    if (document) this.#expire(name, document);
    const stored = document?.stored;
    if (!document || !stored || stored.version !== version) return false;
    stored.fetchedAt = Math.max(stored.fetchedAt, fetchedAt);
    stored.expiresAt = this.#now() + retainMs;
    document.failure = undefined;
    this.#options.notify(name, version, stored.fetchedAt);
    this.#wake(name, document);
    return true;
  }

  /** Records a failed fetch, for the workers that waited for it (and, with a failure TTL, all). */
  fail({ name, token, code, status, at, ttlMs }: FailTell): void {
    const document = this.#document(name);
    document.failure = { token, code, status, at, expiresAt: this.#now() + ttlMs };
    this.#wake(name, document);
  }

  renew({ name, token, lockMs }: RenewTell): void {
    const lock = this.#documents.get(name)?.lock;
    if (lock?.token === token) lock.expiresAt = this.#now() + lockMs;
  }

  release({ name, token }: ReleaseTell): void {
    const document = this.#documents.get(name);
    if (!document || document.lock?.token !== token) return;
    document.lock = undefined;
    this.#wake(name, document);
  }

  /** A worker exited: its locks are let go of, and its waits forgotten. */
  workerGone(worker: number): void {
    for (const [name, document] of this.#documents) {
      const waiting = document.waiters.length;
      for (let index = document.waiters.length - 1; index >= 0; index--) {
        if (document.waiters[index]?.worker === worker) document.waiters.splice(index, 1);
      }
      if (document.lock?.worker === worker) {
        document.lock = undefined;
        this.#wake(name, document);
      } else if (document.waiters.length !== waiting) this.#schedule(name, document);
    }
  }

  close(): void {
    clearInterval(this.#sweep);
    for (const document of this.#documents.values()) clearTimeout(document.timer);
    this.#documents.clear();
    this.#storeOrder.clear();
    this.#chars = 0;
  }

  #document(name: string): Document {
    let document = this.#documents.get(name);
    if (!document) {
      document = { waiters: [] };
      this.#documents.set(name, document);
    }
    return document;
  }

  /**
   * Answers `waiter` if it can be now (true): a failure it must hear, a newer snapshot, the lock
   * (taken for it), or its time is up. False: another worker's fetch is under way.
   */
  #settle(name: string, document: Document, waiter: Waiter): boolean {
    const now = this.#now();
    this.#expire(name, document);
    const { ask } = waiter;
    const { failure, stored } = document;
    if (failure && (ask.answerFailures || failure.token === waiter.waitedFor)) {
      waiter.answer({
        status: 'failed',
        code: failure.code,
        ...(failure.status === undefined ? {} : { httpStatus: failure.status }),
        at: failure.at,
      });
      return true;
    }
    if (stored && (stored.version !== ask.known || stored.fetchedAt > ask.knownAt)) {
      waiter.answer(
        { status: 'stored', ...stampOf(stored) },
        stored.version === ask.known ? undefined : stored.body,
      );
      return true;
    }
    if (!document.lock) {
      document.lock = { token: ask.token, worker: waiter.worker, expiresAt: now + ask.lockMs };
      waiter.answer({ status: 'acquired' });
      return true;
    }
    if (now >= waiter.deadline) {
      waiter.answer({ status: 'timeout' });
      return true;
    }
    return false;
  }

  /** Answers the waiters that can be now, in the order they came; the rest wait on. */
  #wake(name: string, document: Document): void {
    const waiters = document.waiters.splice(0);
    for (const waiter of waiters) {
      if (!this.#settle(name, document, waiter)) document.waiters.push(waiter);
    }
    this.#schedule(name, document);
  }

  /** Wakes the waiters at the first deadline, or when the lock expires (its holder hung). */
  #schedule(name: string, document: Document): void {
    clearTimeout(document.timer);
    document.timer = undefined;
    if (document.waiters.length === 0) {
      this.#forgetIfEmpty(name, document);
      return;
    }
    let at = document.lock?.expiresAt ?? Number.POSITIVE_INFINITY;
    for (const waiter of document.waiters) at = Math.min(at, waiter.deadline);
    document.timer = setTimeout(() => this.#wake(name, document), Math.max(0, at - this.#now()));
    document.timer.unref();
  }

  /** Lets go of what has expired in `document`. */
  #expire(name: string, document: Document): void {
    const now = this.#now();
    if (document.stored && document.stored.expiresAt <= now) this.#drop(name, document);
    if (document.lock && document.lock.expiresAt <= now) document.lock = undefined;
    if (document.failure && document.failure.expiresAt <= now) document.failure = undefined;
  }

  #drop(name: string, document: Document): void {
    if (!document.stored) return;
    this.#chars -= document.stored.body.length;
    document.stored = undefined;
    this.#storeOrder.delete(name);
  }

  #forgetIfEmpty(name: string, document: Document): void {
    if (!document.stored && !document.lock && !document.failure && document.waiters.length === 0) {
      this.#documents.delete(name);
    }
  }

  #sweepAll(): void {
    for (const [name, document] of this.#documents) {
      this.#expire(name, document);
      if (document.waiters.length > 0) this.#wake(name, document);
      else this.#forgetIfEmpty(name, document);
    }
  }
}

function stampOf(stored: Stored) {
  return {
    version: stored.version,
    fetchedAt: stored.fetchedAt,
    ...(stored.etag === undefined ? {} : { etag: stored.etag }),
    ...(stored.lastModified === undefined ? {} : { lastModified: stored.lastModified }),
  };
}
