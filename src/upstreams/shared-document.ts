import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { z } from 'zod';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import { UpstreamBadResponseError } from '../errors/upstream-bad-response-error.js';
import { type UpstreamEndpoint, UpstreamError } from '../errors/upstream-error.js';
import { UpstreamUnavailableError } from '../errors/upstream-unavailable-error.js';
import type { SharedLoad, Snapshot, SnapshotSharing } from './snapshot-cache.js';
import { UNCHANGED, type Unchanged, type Validators } from './validators.js';

/*
 * One status document shared by several processes (replicas through Redis, the workers of a replica
 * through their primary): per document and TTL one of them fetches, under the document's lock; it
 * stores the validated document with its fetch time, version (its lock token) and validators, and
 * the others adopt it, built once per version per process. This is the protocol, written once; a
 * `DocumentBackend` only moves the bytes and the lock.
 */

/**
 * The largest stored document a process reads (its JSON, as stored): a snapshot over it is left
 * unread, and one this large is not stored, so that each process fetches it alone. The upstream's
 * own limit is 10 MiB of raw body; what a process builds from a document is several times its
 * size, and a few of them at once must fit in a 256 MiB heap.
 */
export const MAX_STORED_SNAPSHOT_BYTES = 4 * 1024 * 1024;

/** How many of its own stores a process remembers, for the change events that follow them. */
const REMEMBERED_STORES = 16;

export interface SharedDocumentOptions<Wire, Value> {
  /** Names the document in keys and notices (its path). */
  readonly name: string;
  /**
   * Fetches the document. With `validators` (those of the stored version this replica holds), the
   * fetch may be conditional, and resolve `UNCHANGED` when the upstream says it is (a 304).
   */
  readonly fetch: (requestId?: string, validators?: Validators) => Promise<Wire | Unchanged>;
  /**
   * The validators the upstream sent with a document `fetch` resolved, stored with it so that
   * whichever replica fetches next can ask whether it changed.
   * @default none: every fetch is unconditional
   */
  readonly validatorsOf?: (wire: Wire) => Validators | undefined;
  /**
   * Checks a stored document as the upstream's answer was checked: what comes out of Redis is
   * input like any other. It must accept the JSON of its own output.
   */
  readonly schema: z.ZodType<Wire>;
  /**
   * Indexes a document into the value every request reads (once per version per replica);
   * `storedBytes` is the length of its JSON as stored, what its owner sizes it by.
   */
  readonly build: (wire: Wire, storedBytes: number) => Value;
  readonly ttlMs: number;
  /** How long a stored snapshot is kept: as a stand-in while the upstream fails, and as the baseline of the next. */
  readonly retainMs: number;
  /** How long a failed fetch is answered to every replica before the upstream is asked again. */
  readonly failureTtlMs: number;
  /**
   * How long the lock outlives a replica that stopped renewing it (the upstream's timeout): a
   * replica that dies while fetching holds the others back no longer than this.
   */
  readonly lockMs: number;
  /**
   * The upstream a failure another replica recorded is reported against, with `GET` and `name`.
   * @default 'status feed'
   */
  readonly upstream?: string;
  /** @default Date.now */
  readonly now?: () => number;
}

/** A snapshot this process stored: which document and version its changes belong to. */
export interface StoredSource {
  readonly name: string;
  readonly version: string;
}

/** A stored snapshot as its backend read it: `body` only when the reader lacks its version. */
export interface StoredSnapshot {
  readonly version: string;
  readonly fetchedAt: number;
  readonly validators?: Validators | undefined;
  readonly body?: string | undefined;
}

/** What a process asks for when it needs a fresh snapshot. */
export interface LockAsk {
  /** This process's lock token, should it get the lock: the version of what it stores. */
  readonly token: string;
  /** The version this process holds (`''` for none): another stored one is newer. */
  readonly known: string;
  /** The fetch time of `known`: the same version confirmed later is newer too. */
  readonly knownAt: number;
  /** The holder of the lock this process last waited for: that fetch's failure is its answer. */
  readonly waitedFor: string;
  /** Whether a recorded failure is answered whoever's fetch it was (a failure TTL is on). */
  readonly answerFailures: boolean;
  readonly lockMs: number;
  /** How long a process waits for another's fetch before it fetches alone. */
  readonly waitMs: number;
  /** How long a failure record lives: long enough for the processes that wait on the fetch. */
  readonly failureMs: number;
}

export type LockAnswer =
  | { readonly status: 'acquired' }
  /** A newer snapshot: `snapshot` when it came with the answer, read with `latest` otherwise. */
  | {
      readonly status: 'stored';
      readonly version: string;
      readonly fetchedAt: number;
      readonly snapshot?: StoredSnapshot | undefined;
    }
  /** A fetch failed that this process must answer: the code and status it recorded. */
  | {
      readonly status: 'failed';
      readonly code: UpstreamError['code'];
      readonly httpStatus?: number | undefined;
    }
  /** Another process holds the lock; `wait` resolves when it may have let go, to ask again. */
  | { readonly status: 'held'; readonly holder: string; readonly wait: () => Promise<void> };

/** A snapshot this process fetched, for its backend to store: its JSON is `body`. */
export interface FetchedSnapshot {
  readonly token: string;
  readonly fetchedAt: number;
  readonly body: string;
  readonly retainMs: number;
  readonly validators: Validators | undefined;
}

/** The upstream called stored `version` unchanged at `fetchedAt` (a 304). */
export interface Confirmation {
  readonly version: string;
  readonly fetchedAt: number;
  readonly retainMs: number;
}

/** A failed fetch, recorded for the processes waiting on it: no text, code and status only. */
export interface FailedFetch {
  readonly token: string;
  readonly code: UpstreamError['code'];
  readonly status?: number | undefined;
  readonly at: number;
  readonly ttlMs: number;
}

/**
 * Where a document's shared snapshot, lock and failure live. Each call fails with
 * `RedisUnavailableError` when the place cannot answer; what it sends back is checked there.
 */
export interface DocumentBackend {
  readonly available: boolean;
  /** The stored snapshot, without its body when it is version `known`. */
  read(known: string): Promise<StoredSnapshot | 'none' | 'unreadable'>;
  /** Takes the lock, unless a newer snapshot is stored or a failure must be answered. */
  acquire(ask: LockAsk): Promise<LockAnswer>;
  /** Keeps the lock for `lockMs` more while its holder still fetches. */
  renew(token: string, lockMs: number): Promise<unknown>;
  release(token: string): Promise<unknown>;
  /** Stores a snapshot (unless a newer one is there) and tells the others; whether it did. */
  store(snapshot: FetchedSnapshot): Promise<boolean>;
  /** Moves `version`'s fetch time on and tells the others; false when another version is stored. */
  confirm(confirmation: Confirmation): Promise<boolean>;
  fail(failure: FailedFetch): Promise<unknown>;
  /** Reports a stored value this process refused. */
  refused(kind: string, details?: Record<string, unknown>): void;
}

/**
 * The documents of one shared store, by name: each registered for the notices about it until it is
 * closed (a status page released: nothing of it stays here).
 */
export class SharedDocuments<Backend extends DocumentBackend> {
  readonly #backendOf: (name: string, now: () => number) => Backend;
  readonly #documents = new Map<
    string,
    { readonly document: SharedDocument<unknown, unknown>; readonly backend: Backend }
  >();
  /** This process's last stores, by fetch time: what its change events name. */
  readonly #stores = new LRUCache<number, StoredSource>({ max: REMEMBERED_STORES });

  constructor(backendOf: (name: string, now: () => number) => Backend) {
    this.#backendOf = backendOf;
  }

  /** The sharing of one document, for its `SnapshotCache`. */
  document<Wire, Value>(options: SharedDocumentOptions<Wire, Value>): SnapshotSharing<Value> {
    const { name } = options;
    const backend = this.#backendOf(name, options.now ?? Date.now);
    const document: SharedDocument<Wire, Value> = new SharedDocument(
      options,
      backend,
      this.#stores,
      () => {
        // A page made again meanwhile registered a document of its own under the name.
        if (this.#documents.get(name)?.document === document) this.#documents.delete(name);
      },
    );
    this.#documents.set(name, {
      document: document as SharedDocument<unknown, unknown>,
      backend,
    });
    return document;
  }

  /** How many documents are registered: a test's window on what released pages leave. */
  get documents(): number {
    return this.#documents.size;
  }

  /**
   * The document and version of the snapshot this process stored with fetch time `fetchedAt`
   * (what a change event found in its load names), `undefined` when it stored none then.
   */
  storedAt(fetchedAt: number): StoredSource | undefined {
    return this.#stores.peek(fetchedAt);
  }

  /**
   * The value of document `name`'s snapshot `version` when the store holds it now (built once per
   * version), with the value this process held before it; `undefined` when it holds another, or
   * none, or cannot answer.
   */
  async confirmed(name: string, version: string) {
    return this.#documents.get(name)?.document.confirmed(version);
  }

  /** Document `name` and its backend, for a notice about it. */
  protected registered(name: string) {
    return this.#documents.get(name);
  }
}

/** One document's protocol over its backend: see above. */
export class SharedDocument<Wire, Value> implements SnapshotSharing<Value> {
  readonly #options: SharedDocumentOptions<Wire, Value>;
  readonly #backend: DocumentBackend;
  /** The store's record of this process's stores, by fetch time. */
  readonly #stores: LRUCache<number, StoredSource>;
  readonly #unregister: () => void;
  readonly #now: () => number;
  /** How long a failure record lives: long enough for the processes that wait on the fetch. */
  readonly #failureMs: number;
  /** The version of each snapshot this process built or fetched. */
  readonly #versions = new WeakMap<Snapshot<Value>, string>();
  /** The upstream's validators of each snapshot's document, when it sent any. */
  readonly #validators = new WeakMap<Snapshot<Value>, Validators>();
  /** The newest stored snapshot this process has seen, so that a version is built only once. */
  #latest: Snapshot<Value> | undefined;
  /** The one `#latest` replaced: what a change event about something gone is checked against. */
  #previous: Snapshot<Value> | undefined;
  readonly #watchers = new Set<(supersedes: (snapshot: Snapshot<Value>) => boolean) => void>();

  constructor(
    options: SharedDocumentOptions<Wire, Value>,
    backend: DocumentBackend,
    stores: LRUCache<number, StoredSource>,
    unregister: () => void,
  ) {
    this.#options = options;
    this.#backend = backend;
    this.#stores = stores;
    this.#unregister = unregister;
    this.#now = options.now ?? Date.now;
    this.#failureMs = Math.max(options.failureTtlMs, options.lockMs);
  }

  get available(): boolean {
    return this.#backend.available;
  }

  /** Whether a cache watches this document: a notice need not be checked otherwise. */
  get watched(): boolean {
    return this.#watchers.size > 0;
  }

  watch(listener: (supersedes: (snapshot: Snapshot<Value>) => boolean) => void): void {
    this.#watchers.add(listener);
  }

  close(): void {
    this.#unregister();
    this.#watchers.clear();
    this.#latest = undefined;
    this.#previous = undefined;
  }

  /** The store holds `version` stored (or confirmed) at `fetchedAt`: what is older is superseded. */
  supersede(version: string, fetchedAt: number): void {
    for (const listener of this.#watchers) {
      listener(
        (snapshot) =>
          this.#versions.get(snapshot) !== version && snapshot.fetchedAt.getTime() <= fetchedAt,
      );
    }
  }

  async confirmed(version: string): Promise<{ value: unknown; previous: unknown } | undefined> {
    const snapshot = await this.latest().catch(() => undefined);
    if (!snapshot || this.#versions.get(snapshot) !== version) return undefined;
    return { value: snapshot.value, previous: this.#previous?.value };
  }

  async latest(): Promise<Snapshot<Value> | undefined> {
    const known = this.#latest;
    const stored = await this.#backend.read((known && this.#versions.get(known)) ?? '');
    if (stored === 'none') return undefined;
    if (stored === 'unreadable') return known;
    return this.#adopt(stored, known);
  }

  async load(current: Snapshot<Value> | undefined, requestId?: string): Promise<SharedLoad<Value>> {
    const { lockMs, failureTtlMs } = this.#options;
    // The bound on what a lock held by anyone (a stuck process, or whoever can write to Redis)
    // costs a reader: past it, this process fetches alone.
    const maxWaitMs = 2 * lockMs;
    const deadline = this.#now() + maxWaitMs;
    let baseline = current;
    let known = (current && this.#versions.get(current)) ?? '';
    let knownAt = known === '' || !current ? 0 : current.fetchedAt.getTime();
    let waitedFor = '';
    for (;;) {
      const token = randomUUID();
      const answer = await this.#backend.acquire({
        token,
        known,
        knownAt,
        waitedFor,
        answerFailures: failureTtlMs > 0,
        lockMs,
        waitMs: maxWaitMs,
        failureMs: this.#failureMs,
      });
      if (answer.status === 'failed') throw this.#failureOf(answer.code, answer.httpStatus);
      if (answer.status === 'acquired') return this.#fetchHolding(token, baseline, requestId);
      if (answer.status === 'stored') {
        // Another process stored a snapshot (or confirmed this one) since this one looked; one this
        // process refuses becomes `known`, so that the next look takes the lock and replaces it.
        known = answer.version;
        knownAt = answer.fetchedAt;
        const stored = answer.snapshot
          ? this.#adopt(answer.snapshot, this.#latest)
          : await this.latest();
        if (!stored || this.#versions.get(stored) !== answer.version) {
          // Read with the answer, it is no newer one that came meanwhile: it cannot be built.
          if (answer.snapshot) throw new RedisUnavailableError('a stored snapshot is not readable');
          continue;
        }
        if (!baseline || stored.fetchedAt > baseline.fetchedAt) baseline = stored;
        if (this.#now() - stored.fetchedAt.getTime() < this.#options.ttlMs) {
          return { snapshot: stored, fetched: false };
        }
        continue;
      }
      // Held: wait for its holder's notice, or for the lock to go (released, or expired with a
      // holder that died).
      waitedFor = answer.holder;
      if (this.#now() > deadline) {
        throw new RedisUnavailableError(`waited ${maxWaitMs} ms for another replica's fetch`);
      }
      await answer.wait();
    }
  }

  async #fetchHolding(
    token: string,
    baseline: Snapshot<Value> | undefined,
    requestId: string | undefined,
  ): Promise<SharedLoad<Value>> {
    const { lockMs, name, retainMs } = this.#options;
    const renew = setInterval(() => {
      this.#backend.renew(token, lockMs).catch(() => {});
    }, lockMs / 3);
    renew.unref();
    try {
      const version = baseline && this.#versions.get(baseline);
      const validators = baseline && version ? this.#validators.get(baseline) : undefined;
      let wire: Wire;
      try {
        const fetched = await this.#options.fetch(requestId, validators);
        if (fetched !== UNCHANGED) wire = fetched;
        else {
          const confirmed =
            baseline && version && validators
              ? await this.#confirmStored(baseline, version, validators)
              : undefined;
          if (confirmed) {
            return { snapshot: confirmed, fetched: true, previous: baseline, unchanged: true };
          }
          // The store no longer holds the version the upstream confirmed (it expired, or another
          // was stored meanwhile): the others could not adopt the confirmation, so it is fetched
          // whole.
          const whole = await this.#options.fetch(requestId);
          if (whole === UNCHANGED) throw new TypeError('an unconditional fetch answered UNCHANGED');
          wire = whole;
        }
      } catch (error) {
        if (error instanceof UpstreamError) {
          const status = error instanceof UpstreamUnavailableError ? error.status : undefined;
          await this.#backend
            .fail({
              token,
              code: error.code,
              ...(status === undefined ? {} : { status }),
              at: this.#now(),
              ttlMs: this.#failureMs,
            })
            .catch(() => {});
        }
        throw error;
      }
      const fetchedAt = this.#now();
      const body = JSON.stringify(wire);
      const fetchedValidators = this.#options.validatorsOf?.(wire);
      const snapshot = this.#snapshotOf(
        token,
        fetchedAt,
        this.#options.build(wire, body.length),
        fetchedValidators,
      );
      this.#setLatest(snapshot);
      // Over the limit, it is too large for the others to read: each process fetches it alone.
      if (Buffer.byteLength(body) <= MAX_STORED_SNAPSHOT_BYTES) {
        const stored = await this.#backend
          .store({ token, fetchedAt, body, retainMs, validators: fetchedValidators })
          // The store went away meanwhile: this process keeps what it fetched, as it would alone.
          .catch(() => false);
        if (stored) this.#stores.set(fetchedAt, { name, version: token });
      }
      return { snapshot, fetched: true, previous: baseline };
    } finally {
      clearInterval(renew);
      await this.#backend.release(token).catch(() => {});
    }
  }

  /**
   * The snapshot `stored` describes: `known` when it is its version and no later, confirmed at its
   * fetch time when later, or built from its body; `known` when it cannot be built.
   */
  #adopt(stored: StoredSnapshot, known: Snapshot<Value> | undefined): Snapshot<Value> | undefined {
    const { version, fetchedAt, validators, body } = stored;
    if (known && this.#versions.get(known) === version) {
      // Another process's refetch was answered unchanged (a 304): the same value, confirmed later.
      if (fetchedAt <= known.fetchedAt.getTime()) return known;
      return this.#confirmed(known, version, fetchedAt, validators);
    }
    if (body === undefined || body.length > MAX_STORED_SNAPSHOT_BYTES) return known;
    // A stored document that does not pass the schema is as good as absent.
    let wire: Wire;
    try {
      wire = this.#options.schema.parse(JSON.parse(body));
    } catch (error) {
      this.#backend.refused('invalid snapshot', { err: error });
      return known;
    }
    const snapshot = this.#snapshotOf(
      version,
      fetchedAt,
      this.#options.build(wire, body.length),
      validators,
    );
    if (!this.#latest || fetchedAt >= this.#latest.fetchedAt.getTime()) this.#setLatest(snapshot);
    return snapshot;
  }

  #setLatest(snapshot: Snapshot<Value>): void {
    const latest = this.#latest;
    // A version confirmed again replaces itself: the one before it stays what it replaced.
    const confirmation = latest && this.#versions.get(latest) === this.#versions.get(snapshot);
    if (latest !== snapshot && !confirmation) this.#previous = latest;
    this.#latest = snapshot;
  }

  #snapshotOf(
    version: string,
    fetchedAt: number,
    value: Value,
    validators: Validators | undefined,
  ): Snapshot<Value> {
    const snapshot = { value, fetchedAt: new Date(fetchedAt), stale: false };
    this.#versions.set(snapshot, version);
    if (validators) this.#validators.set(snapshot, validators);
    return snapshot;
  }

  /**
   * `known`'s value, confirmed unchanged at `fetchedAt`: a snapshot of its own (what a read at
   * that time is served, its `fetchedAt` the confirmation's), built from nothing.
   */
  #confirmed(
    known: Snapshot<Value>,
    version: string,
    fetchedAt: number,
    validators: Validators | undefined,
  ): Snapshot<Value> {
    const snapshot = this.#snapshotOf(version, fetchedAt, known.value, validators);
    if (!this.#latest || fetchedAt >= this.#latest.fetchedAt.getTime()) this.#setLatest(snapshot);
    return snapshot;
  }

  /**
   * Records in the store that the upstream called `baseline` (stored as `version`) unchanged now,
   * for the others to adopt without a rebuild; `undefined` when the store holds another version or
   * none. When the store cannot answer, this process keeps the confirmation, as it would alone.
   */
  async #confirmStored(
    baseline: Snapshot<Value>,
    version: string,
    validators: Validators,
  ): Promise<Snapshot<Value> | undefined> {
    const fetchedAt = this.#now();
    const confirmed = await this.#backend
      .confirm({ version, fetchedAt, retainMs: this.#options.retainMs })
      .catch(() => true);
    if (!confirmed) return undefined;
    return this.#confirmed(baseline, version, fetchedAt, validators);
  }

  /**
   * The error another process's fetch failed with, as its own readers got it: the code and status
   * it recorded, and this process's own words (a record carries no text).
   */
  #failureOf(code: UpstreamError['code'], status: number | undefined): Error {
    const { upstream = 'status feed', name: path } = this.#options;
    const endpoint: UpstreamEndpoint = { upstream, method: 'GET', path };
    if (code === 'UPSTREAM_BAD_RESPONSE') {
      return new UpstreamBadResponseError(endpoint, 'not a document of this endpoint');
    }
    return new UpstreamUnavailableError(
      endpoint,
      status === undefined ? 'no answer' : `HTTP ${status}`,
      status === undefined ? {} : { status },
    );
  }
}
