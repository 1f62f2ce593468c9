import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import { UNCHANGED, type Unchanged } from './validators.js';

/** A value and when the gateway fetched it. */
export interface Snapshot<Value> {
  readonly value: Value;
  /** When the upstream last sent this value, or said it was unchanged (a 304). */
  readonly fetchedAt: Date;
  /** True when a refresh failed and this older snapshot is served instead (stale-if-error). */
  readonly stale: boolean;
}

/**
 * `hit`: fresh; `miss`: a read that waits for a fetch; `coalesced`: a read that waits for a fetch
 * another read started; `revalidating`: served the last snapshot at once while it is refetched;
 * `stale`: a refetch failed and the last good snapshot stands in; `unchanged`: a refetch the
 * upstream answered unchanged (a 304), so the snapshot on hand was kept, confirmed now, and nothing
 * was parsed or built.
 */
export type SnapshotCacheEvent =
  | 'hit'
  | 'miss'
  | 'coalesced'
  | 'revalidating'
  | 'stale'
  | 'unchanged';

export interface SnapshotCacheOptions<Value> {
  /**
   * Fetches a fresh value; its rejection is what callers see when no snapshot can stand in.
   * `requestId` is the id of the request whose read started the load. `current` is the snapshot on
   * hand (none once the cache is closed): a load that can ask the upstream whether it changed (a
   * conditional GET) resolves `UNCHANGED` when it did not, and the cache keeps that snapshot's
   * value, confirmed at this time (a new snapshot: its `fetchedAt` says when it was last
   * confirmed), without `onLoaded`: nothing changed.
   */
  readonly load: (requestId?: string, current?: Snapshot<Value>) => Promise<Value | Unchanged>;
  /** How long a snapshot is served without asking the upstream again. */
  readonly ttlMs: number;
  /**
   * How long after its fetch a snapshot may still be served when a refresh fails.
   * `0` turns stale-if-error off.
   */
  readonly maxStaleMs: number;
  /**
   * How long a failed load, with no snapshot to stand in, is answered from memory before the
   * upstream is asked again. `0` asks again on the next read.
   * @default 0
   */
  readonly failureTtlMs?: number;
  /** Told of every read, for metrics. */
  readonly onEvent?: (event: SnapshotCacheEvent, error?: unknown) => void;
  /**
   * Told of each successful upstream load, once, after `next` became the current snapshot, with
   * the snapshot it replaces (`undefined` on the first load). A failed refetch, a stale stand-in
   * and a read that joined another's load never call it: an outage is not a change. It must not
   * throw; change detection hangs here (`status-diff.ts`). With `sharing`, only the replica that
   * fetched calls it, with the replicas' previous snapshot as `previous`.
   */
  readonly onLoaded?: (previous: Snapshot<Value> | undefined, next: Snapshot<Value>) => void;
  /**
   * Shares snapshots with the other replicas (`RedisSnapshotStore`): one of them fetches per
   * TTL, the others adopt what it stored. While it is unavailable, the cache loads alone.
   * @default undefined (this process alone)
   */
  readonly sharing?: SnapshotSharing<Value>;
  /** @default Date.now */
  readonly now?: () => number;
}

/** A snapshot loaded through `SnapshotSharing`. */
export interface SharedLoad<Value> {
  readonly snapshot: Snapshot<Value>;
  /** Whether this process fetched it from the upstream, rather than adopting another replica's. */
  readonly fetched: boolean;
  /** When fetched here: the replicas' snapshot it replaces, `onLoaded`'s `previous`. */
  readonly previous?: Snapshot<Value> | undefined;
  /**
   * When fetched here: the upstream said `previous` is unchanged, and `snapshot` is its value
   * confirmed now. No change to look for: `onLoaded` is not called.
   */
  readonly unchanged?: boolean;
}

/**
 * Snapshots shared by several replicas: whichever replica asks, one of them fetches the document
 * per TTL and the others adopt it. Every method fails with `RedisUnavailableError` when the shared
 * store cannot answer, and the cache then works alone.
 */
export interface SnapshotSharing<Value> {
  /** Whether the shared store is reachable now; when not, the cache does not try it. */
  readonly available: boolean;
  /**
   * The newest snapshot the replicas share, `undefined` if none; the same object for a version
   * this process has already seen (each version is built once per process).
   */
  latest(): Promise<Snapshot<Value> | undefined>;
  /**
   * A fresh snapshot: another replica's, or fetched here while this process holds the replicas'
   * lock on the document (the others wait for it). `current` is the newest snapshot this process
   * knows; it rejects with the upstream's error when the fetch fails, whichever replica made it.
   */
  load(current: Snapshot<Value> | undefined, requestId?: string): Promise<SharedLoad<Value>>;
  /**
   * Calls `listener` whenever another replica stores a newer snapshot, with a test that tells
   * whether a snapshot is superseded by it.
   */
  watch(listener: (supersedes: (snapshot: Snapshot<Value>) => boolean) => void): void;
  /** Forgets the document's watchers and what it holds of it: its cache is closed. */
  close(): void;
}

/**
 * One upstream document shared by all requests: fresh for `ttlMs`, fetched once however many
 * requests ask for it at the same time, and kept on hand to stand in while the upstream fails.
 * Past its TTL, a snapshot still within `maxStaleMs` is served at once while it is refetched in
 * the background (stale-while-revalidate): no reader waits for the upstream while a usable
 * snapshot exists. A failed refetch marks what is served `stale`; a good one replaces it, and one
 * the upstream answers unchanged (a 304 to a conditional `load`) confirms it: the same value, a
 * new `fetchedAt`.
 *
 * With `sharing`, the replicas share each snapshot and its `fetchedAt`: the TTL runs from the
 * fetch whichever replica made it, and a snapshot another replica has replaced stops being current
 * here as soon as this process hears of it.
 */
export class SnapshotCache<Value> {
  readonly #options: SnapshotCacheOptions<Value>;
  readonly #now: () => number;
  #current: Snapshot<Value> | undefined;
  /** `#current` marked stale, once a refetch has failed; cleared by the next good one. */
  #standIn: Snapshot<Value> | undefined;
  #refreshing: Promise<Snapshot<Value>> | undefined;
  /** When `#refreshing` started (epoch ms). */
  #refreshingSince = 0;
  #failure: { error: unknown; at: number } | undefined;
  /** `#current` once another replica has stored a newer snapshot: no longer current. */
  #superseded: Snapshot<Value> | undefined;
  /** Counts changes of `#current` and `#superseded`: a `currencyOf` check holds on to it. */
  #generation = 0;
  /** The `refetch` waiting for the refresh under way to end, shared by the calls meanwhile. */
  #refetching: Promise<void> | undefined;
  /** Set by `close`: loads still serve their readers, and keep nothing. */
  #closed = false;

  constructor(options: SnapshotCacheOptions<Value>) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    options.sharing?.watch((supersedes) => {
      const current = this.#current;
      if (current && supersedes(current)) {
        this.#superseded = current;
        this.#generation += 1;
      }
    });
  }

  #isFresh(snapshot: Snapshot<Value>, now: number): boolean {
    return (
      snapshot !== this.#superseded && now - snapshot.fetchedAt.getTime() < this.#options.ttlMs
    );
  }

  /**
   * Whether `snapshot` is what a read would serve right now without fetching: the current one,
   * still within its TTL. Lets a cache of answers built from it know they are still good.
   */
  isCurrent(snapshot: object): boolean {
    const current = this.#current;
    return current === snapshot && this.#isFresh(current, this.#now());
  }

  /**
   * A check, for a cache of answers built from `snapshot`, that a read at a time (epoch ms) would
   * still be served that very snapshot: while it is fresh, and past its TTL while it is refetched
   * and served meanwhile, until a newer one lands, a refetch fails (then `stale` answers) or
   * `maxStaleMs` is over. The stand-in (`stale`) passes while it is the one served, up to
   * `maxStaleMs` after its fetch: answers built from it are served from memory through an outage,
   * and stop the moment a refetch succeeds. A check past the TTL, or of the stand-in, is a read: it
   * starts a refetch as a resolver's read would. It holds nothing of the snapshot; while fresh it
   * costs two comparisons. `undefined` when `snapshot` is neither the current, fresh one nor the
   * stand-in now.
   */
  currencyOf(snapshot: object): ((now: number) => boolean) | undefined {
    const standIn = this.#standIn;
    if (standIn !== undefined && snapshot === standIn) {
      const usableUntil = standIn.fetchedAt.getTime() + this.#options.maxStaleMs;
      if (this.#now() > usableUntil) return undefined;
      return (now) => {
        if (this.#standIn !== standIn || now > usableUntil) return false;
        this.#revalidate();
        return true;
      };
    }
    if (!this.isCurrent(snapshot)) return undefined;
    const current = this.#current as Snapshot<Value>;
    const generation = this.#generation;
    const fetchedAt = current.fetchedAt.getTime();
    const freshUntil = fetchedAt + this.#options.ttlMs;
    const usableUntil = fetchedAt + this.#options.maxStaleMs;
    return (now) => {
      if (generation !== this.#generation) return false;
      if (now < freshUntil) return true;
      if (now > usableUntil || this.#standIn !== undefined) return false;
      this.#revalidate();
      return true;
    };
  }

  /** A read for a `currencyOf` check past the TTL: it starts the refetch, and nobody awaits it. */
  #revalidate(): void {
    // Past `maxStaleMs` (a check's clock may run a little behind this one) a read rejects.
    this.get().catch(() => {});
  }

  /**
   * When the fetch under way started (epoch ms), `undefined` when none is: a reader served the last
   * snapshot meanwhile can tell how long the upstream has kept it waiting.
   */
  get refreshingSince(): number | undefined {
    return this.#refreshing ? this.#refreshingSince : undefined;
  }

  /** The last good snapshot, fresh or not, without fetching. */
  get current(): Snapshot<Value> | undefined {
    return this.#current;
  }

  /** The snapshot to serve; `requestId` is passed on to a load this read starts. */
  get(requestId?: string): Promise<Snapshot<Value>> {
    const current = this.#current;
    const now = this.#now();
    if (current && this.#isFresh(current, now)) {
      this.#options.onEvent?.('hit');
      return Promise.resolve(current);
    }
    const usable =
      current !== undefined && now - current.fetchedAt.getTime() <= this.#options.maxStaleMs;
    if (!usable) {
      const failure = this.#failure;
      if (failure && now - failure.at < (this.#options.failureTtlMs ?? 0)) {
        return Promise.reject(failure.error);
      }
    }
    if (!this.#refreshing) {
      const refreshing = this.#startRefresh(requestId);
      if (!usable) {
        this.#options.onEvent?.('miss');
        return refreshing;
      }
    } else if (!usable) {
      this.#options.onEvent?.('coalesced');
      return this.#refreshing;
    }
    this.#options.onEvent?.('revalidating');
    return Promise.resolve(this.#standIn ?? (current as Snapshot<Value>));
  }

  /**
   * A read that waits for the load it starts: what `get` serves, or, when `get` served the last
   * snapshot while refetching it, the refetch's outcome. A poller reads this way, so that it knows
   * when the snapshot it now holds expires.
   */
  async latest(requestId?: string): Promise<Snapshot<Value>> {
    const served = await this.get(requestId);
    return (await this.#refreshing) ?? served;
  }

  /**
   * Fetches the document again now, whatever its TTL, when a snapshot of it is held here or, with
   * `sharing`, by the replicas (its upstream said it changed: a webhook; a document nobody read has
   * nobody to tell), as any refetch: a change is told `onLoaded`, a failure makes the snapshot a
   * stand-in. The fetch starts after this call, so that it reads what the upstream holds now: a
   * refetch already under way started before and may have read the old document, so this one
   * follows it; calls until it starts share it. With `sharing`, another replica's snapshot stored
   * since is taken instead. Resolves when it is done, whatever its outcome.
   */
  refetch(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#refetching ??= (async () => {
      await this.#refreshing?.catch(() => {});
      this.#refetching = undefined;
      if (this.#closed || !(await this.#isHeld())) return;
      // A refetch a reader started meanwhile started after this call too.
      await (this.#refreshing ?? this.#startRefresh(undefined, true)).catch(() => {});
    })();
    return this.#refetching;
  }

  /** Whether a snapshot of the document is held here, or with `sharing` by the replicas. */
  async #isHeld(): Promise<boolean> {
    if (this.#current !== undefined) return true;
    const sharing = this.#options.sharing;
    if (!sharing?.available) return false;
    return (await sharing.latest().catch(() => undefined)) !== undefined;
  }

  /**
   * Lets go of every snapshot and stops sharing: the owner no longer keeps the document (a status
   * page released for memory). Reads still work, each waiting for a load of its own, and keep
   * nothing; `currencyOf` checks made before answer false, so that no cache of answers holds on.
   */
  close(): void {
    this.#closed = true;
    this.#current = undefined;
    this.#standIn = undefined;
    this.#superseded = undefined;
    this.#failure = undefined;
    this.#generation += 1;
    this.#options.sharing?.close();
  }

  /** Starts the one refresh under way; `force` fetches even when the replicas' snapshot is fresh. */
  #startRefresh(requestId: string | undefined, force = false): Promise<Snapshot<Value>> {
    const refreshing = this.#refresh(requestId, force).finally(() => {
      this.#refreshing = undefined;
    });
    this.#refreshingSince = this.#now();
    // Readers served the last snapshot do not wait for this one; its failure is handled there.
    refreshing.catch(() => {});
    this.#refreshing = refreshing;
    return refreshing;
  }

  async #refresh(requestId: string | undefined, force: boolean): Promise<Snapshot<Value>> {
    try {
      const loaded = await this.#load(requestId, force);
      const { snapshot } = loaded;
      if (!this.#closed) {
        // A confirmed snapshot is a new one too: answers built from the old one said an older
        // `fetchedAt`, and are rebuilt (from the same value: nothing is parsed or indexed again).
        this.#current = snapshot;
        this.#superseded = undefined;
        this.#generation += 1;
        this.#standIn = undefined;
        this.#failure = undefined;
      }
      if (loaded.unchanged) this.#options.onEvent?.('unchanged');
      else if (loaded.fetched) this.#options.onLoaded?.(loaded.previous, snapshot);
      return snapshot;
    } catch (error) {
      const previous = this.#current;
      if (this.#closed) throw error;
      if (previous && this.#now() - previous.fetchedAt.getTime() <= this.#options.maxStaleMs) {
        this.#options.onEvent?.('stale', error);
        this.#standIn ??= { ...previous, stale: true };
        return this.#standIn;
      }
      this.#failure = { error, at: this.#now() };
      throw error;
    }
  }

  async #load(requestId: string | undefined, force: boolean): Promise<SharedLoad<Value>> {
    const sharing = this.#options.sharing;
    if (sharing?.available && !this.#closed) {
      try {
        const latest = await sharing.latest();
        const current = this.#current;
        const newer =
          !current || latest === current || (latest && latest.fetchedAt > current.fetchedAt);
        if (latest && newer && !this.#closed) {
          // The replicas' newest: adopted even when it is past its TTL, as the stand-in to serve
          // if the refetch fails and as the baseline the next snapshot is compared with.
          if (latest !== current) this.#standIn = undefined;
          this.#current = latest;
          this.#superseded = undefined;
          this.#generation += 1;
          if (!force && this.#isFresh(latest, this.#now())) {
            return { snapshot: latest, fetched: false };
          }
        }
        return await sharing.load(this.#current, requestId);
      } catch (error) {
        if (!(error instanceof RedisUnavailableError)) throw error;
      }
    }
    const previous = this.#current;
    let value = await this.#options.load(requestId, previous);
    if (value === UNCHANGED) {
      if (previous) {
        const snapshot = { value: previous.value, fetchedAt: new Date(this.#now()), stale: false };
        return { snapshot, fetched: true, previous, unchanged: true };
      }
      // Nothing on hand that it could confirm: the document is fetched whole.
      value = await this.#options.load(requestId);
      if (value === UNCHANGED) throw new TypeError('a load without a snapshot answered UNCHANGED');
    }
    return {
      snapshot: { value, fetchedAt: new Date(this.#now()), stale: false },
      fetched: true,
      previous,
    };
  }
}
