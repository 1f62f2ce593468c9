import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { z } from 'zod';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import { UpstreamBadResponseError } from '../errors/upstream-bad-response-error.js';
import { type UpstreamEndpoint, UpstreamError } from '../errors/upstream-error.js';
import { UpstreamUnavailableError } from '../errors/upstream-unavailable-error.js';
import {
  MAX_STORED_SNAPSHOT_BYTES,
  type SharedDocumentOptions,
  type StoredSource,
} from '../upstreams/redis-snapshot-store.js';
import type { SharedLoad, Snapshot, SnapshotSharing } from '../upstreams/snapshot-cache.js';
import { UNCHANGED, type Validators } from '../upstreams/validators.js';
import type { Envelope } from './envelope.js';
import { AcquireAnswer, ConfirmAnswer, type Notice, ReadAnswer, StoreAnswer } from './messages.js';
import type { PrimaryLink } from './primary-link.js';

/** How many of its own stores a worker remembers, for the change events that follow them. */
const REMEMBERED_STORES = 16;

/**
 * The status feed's snapshots, shared by the workers of a replica through their primary
 * (`SnapshotHub`), as `RedisSnapshotStore` shares them between replicas: per document and TTL one
 * worker fetches, whichever asks, under the document's lock; it stores the validated document in
 * the primary, which tells every worker; the others adopt it, built once per version per worker.
 * A failed fetch is answered to the workers that waited for it. Only the fetching worker calls
 * `onLoaded` (a change is found once), and a notice supersedes a worker's older snapshot at once.
 * While the primary cannot be reached, every call fails with `RedisUnavailableError` and the
 * worker's caches load alone.
 */
export class ClusterSnapshotStore {
  readonly #link: PrimaryLink;
  readonly #documents = new Map<string, ClusterDocument<unknown, unknown>>();
  readonly #stores = new LRUCache<number, StoredSource>({ max: REMEMBERED_STORES });

  constructor({ link }: { link: PrimaryLink }) {
    this.#link = link;
    link.on('notice', (notice) => this.#documents.get(notice.name)?.noticed(notice));
  }

  /** The sharing of one document, for its `SnapshotCache`, until it is closed. */
  document<Wire, Value>(options: SharedDocumentOptions<Wire, Value>): SnapshotSharing<Value> {
    const { name } = options;
    const document: ClusterDocument<Wire, Value> = new ClusterDocument(
      options,
      this.#link,
      this.#stores,
      () => {
        if (this.#documents.get(name) === document) this.#documents.delete(name);
      },
    );
    this.#documents.set(name, document as ClusterDocument<unknown, unknown>);
    return document;
  }

  /** The document and version this worker stored with fetch time `fetchedAt`, if any. */
  storedAt(fetchedAt: number): StoredSource | undefined {
    return this.#stores.peek(fetchedAt);
  }

  /**
   * The value of document `name`'s snapshot `version` when the primary holds it now (built once
   * per version), with the value this worker held before it; `undefined` otherwise.
   */
  async confirmed(name: string, version: string) {
    return this.#documents.get(name)?.confirmed(version);
  }
}

/** A stored snapshot as the primary describes it. */
interface Stamp {
  readonly version: string;
  readonly fetchedAt: number;
  readonly etag?: string | undefined;
  readonly lastModified?: string | undefined;
}

class ClusterDocument<Wire, Value> implements SnapshotSharing<Value> {
  readonly #options: SharedDocumentOptions<Wire, Value>;
  readonly #link: PrimaryLink;
  readonly #stores: LRUCache<number, StoredSource>;
  readonly #unregister: () => void;
  readonly #now: () => number;
  readonly #failureMs: number;
  readonly #versions = new WeakMap<Snapshot<Value>, string>();
  readonly #validators = new WeakMap<Snapshot<Value>, Validators>();
  #latest: Snapshot<Value> | undefined;
  #previous: Snapshot<Value> | undefined;
  readonly #watchers = new Set<(supersedes: (snapshot: Snapshot<Value>) => boolean) => void>();

  constructor(
    options: SharedDocumentOptions<Wire, Value>,
    link: PrimaryLink,
    stores: LRUCache<number, StoredSource>,
    unregister: () => void,
  ) {
    this.#options = options;
    this.#link = link;
    this.#stores = stores;
    this.#unregister = unregister;
    this.#now = options.now ?? Date.now;
    this.#failureMs = Math.max(options.failureTtlMs, options.lockMs);
  }

  get available(): boolean {
    return this.#link.connected;
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

  /** Another worker stored (or confirmed) `version`: what this worker holds of before is superseded. */
  noticed({ version, fetchedAt }: Notice): void {
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
    const knownVersion = (known && this.#versions.get(known)) ?? '';
    const reply = await this.#link.ask({
      op: 'read',
      name: this.#options.name,
      known: knownVersion,
    });
    const answer = parse(ReadAnswer, reply);
    if (!answer.found) return undefined;
    return this.#adopt(answer, reply.body);
  }

  async load(current: Snapshot<Value> | undefined, requestId?: string): Promise<SharedLoad<Value>> {
    const { lockMs, failureTtlMs, name } = this.#options;
    // As with Redis: past twice the lock time, a worker stops waiting for another's fetch.
    const waitMs = 2 * lockMs;
    let baseline = current;
    let known = (current && this.#versions.get(current)) ?? '';
    let knownAt = known === '' || !current ? 0 : current.fetchedAt.getTime();
    for (;;) {
      const token = randomUUID();
      const reply = await this.#link.ask(
        {
          op: 'acquire',
          name,
          token,
          known,
          knownAt,
          answerFailures: failureTtlMs > 0,
          lockMs,
          waitMs,
        },
        undefined,
        waitMs + 5_000,
      );
      const answer = parse(AcquireAnswer, reply);
      switch (answer.status) {
        case 'acquired':
          return this.#fetchHolding(token, baseline, requestId);
        case 'failed':
          throw this.#failureOf(answer.code, answer.httpStatus);
        case 'timeout':
          throw new RedisUnavailableError(`waited ${waitMs} ms for another worker's fetch`);
        case 'stored': {
          const stored = this.#adopt(answer, reply.body);
          if (!stored || this.#versions.get(stored) !== answer.version) {
            throw new RedisUnavailableError('a stored snapshot is not readable');
          }
          // Stored but past its TTL (or older than this worker's): the next ask takes the lock.
          known = answer.version;
          knownAt = answer.fetchedAt;
          if (!baseline || stored.fetchedAt > baseline.fetchedAt) baseline = stored;
          if (this.#now() - stored.fetchedAt.getTime() < this.#options.ttlMs) {
            return { snapshot: stored, fetched: false };
          }
        }
      }
    }
  }

  async #fetchHolding(
    token: string,
    baseline: Snapshot<Value> | undefined,
    requestId: string | undefined,
  ): Promise<SharedLoad<Value>> {
    const { lockMs, name, retainMs } = this.#options;
    const renew = setInterval(() => {
      this.#link.tell({ t: 'renew', name, token, lockMs });
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
          const whole = await this.#options.fetch(requestId);
          if (whole === UNCHANGED) throw new TypeError('an unconditional fetch answered UNCHANGED');
          wire = whole;
        }
      } catch (error) {
        if (error instanceof UpstreamError) {
          const status = error instanceof UpstreamUnavailableError ? error.status : undefined;
          this.#link.tell({
            t: 'fail',
            name,
            token,
            code:
              error instanceof UpstreamBadResponseError
                ? 'UPSTREAM_BAD_RESPONSE'
                : 'UPSTREAM_UNAVAILABLE',
            ...(status === undefined ? {} : { status }),
            at: this.#now(),
            ttlMs: this.#failureMs,
          });
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
      // Over the limit, it is too large for the others to take: each worker fetches it alone.
      if (Buffer.byteLength(body) <= MAX_STORED_SNAPSHOT_BYTES) {
        const stored = await this.#link
          .ask(
            {
              op: 'store',
              name,
              token,
              fetchedAt,
              retainMs,
              ...(fetchedValidators?.etag === undefined ? {} : { etag: fetchedValidators.etag }),
              ...(fetchedValidators?.lastModified === undefined
                ? {}
                : { lastModified: fetchedValidators.lastModified }),
            },
            body,
          )
          .then((reply) => parse(StoreAnswer, reply).stored)
          // The primary went away meanwhile: this worker keeps what it fetched, as it would alone.
          .catch(() => false);
        if (stored) this.#stores.set(fetchedAt, { name, version: token });
      }
      return { snapshot, fetched: true, previous: baseline };
    } finally {
      clearInterval(renew);
      this.#link.tell({ t: 'release', name, token });
    }
  }

  /**
   * The stored snapshot `stamp` describes: the one this worker built of its version, confirmed at
   * its fetch time when that is later, or built from `body`; `undefined` when it cannot be built.
   */
  #adopt(stamp: Stamp, body: string | undefined): Snapshot<Value> | undefined {
    const known = this.#latest;
    const { version, fetchedAt } = stamp;
    const validators = validatorsOf(stamp);
    if (known && this.#versions.get(known) === version) {
      if (fetchedAt <= known.fetchedAt.getTime()) return known;
      const snapshot = this.#snapshotOf(version, fetchedAt, known.value, validators);
      if (!this.#latest || fetchedAt >= this.#latest.fetchedAt.getTime()) this.#setLatest(snapshot);
      return snapshot;
    }
    if (body === undefined || body.length > MAX_STORED_SNAPSHOT_BYTES) return known;
    let wire: Wire;
    try {
      wire = this.#options.schema.parse(JSON.parse(body));
    } catch {
      // The primary keeps what a worker validated: a document that does not pass is a bug.
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

  async #confirmStored(
    baseline: Snapshot<Value>,
    version: string,
    validators: Validators,
  ): Promise<Snapshot<Value> | undefined> {
    const fetchedAt = this.#now();
    const confirmed = await this.#link
      .ask({
        op: 'confirm',
        name: this.#options.name,
        version,
        fetchedAt,
        retainMs: this.#options.retainMs,
      })
      .then((reply) => parse(ConfirmAnswer, reply).confirmed)
      // The primary could not answer: this worker keeps the confirmation, as it would alone.
      .catch(() => true);
    if (!confirmed) return undefined;
    const snapshot = this.#snapshotOf(version, fetchedAt, baseline.value, validators);
    if (!this.#latest || fetchedAt >= this.#latest.fetchedAt.getTime()) this.#setLatest(snapshot);
    return snapshot;
  }

  #setLatest(snapshot: Snapshot<Value>): void {
    const latest = this.#latest;
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

  /** The error another worker's fetch failed with, in this worker's words. */
  #failureOf(code: string, status: number | undefined): Error {
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

/** The answer's head in its shape; a bug's answer is as good as none. */
function parse<Schema extends z.ZodType>(schema: Schema, reply: Envelope): z.infer<Schema> {
  const parsed = schema.safeParse(reply.head);
  if (!parsed.success) throw new RedisUnavailableError('the primary answered out of shape');
  return parsed.data;
}

function validatorsOf({ etag, lastModified }: Stamp): Validators | undefined {
  if (etag === undefined && lastModified === undefined) return undefined;
  return {
    ...(etag !== undefined && { etag }),
    ...(lastModified !== undefined && { lastModified }),
  };
}
