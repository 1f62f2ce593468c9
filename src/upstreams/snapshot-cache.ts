/** A value and when the gateway fetched it. */
export interface Snapshot<Value> {
  readonly value: Value;
  readonly fetchedAt: Date;
  /** True when a refresh failed and this older snapshot is served instead (stale-if-error). */
  readonly stale: boolean;
}

/**
 * `hit`: fresh; `miss`: a read that waits for a fetch; `coalesced`: a read that waits for a fetch
 * another read started; `revalidating`: served the last snapshot at once while it is refetched;
 * `stale`: a refetch failed and the last good snapshot stands in.
 */
export type SnapshotCacheEvent = 'hit' | 'miss' | 'coalesced' | 'revalidating' | 'stale';

export interface SnapshotCacheOptions<Value> {
  /**
   * Fetches a fresh value; its rejection is what callers see when no snapshot can stand in.
   * `requestId` is the id of the request whose read started the load.
   */
  readonly load: (requestId?: string) => Promise<Value>;
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
   * throw; change detection hangs here (`status-diff.ts`).
   */
  readonly onLoaded?: (previous: Snapshot<Value> | undefined, next: Snapshot<Value>) => void;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * One upstream document shared by all requests: fresh for `ttlMs`, fetched once however many
 * requests ask for it at the same time, and kept on hand to stand in while the upstream fails.
 * Past its TTL, a snapshot still within `maxStaleMs` is served at once while it is refetched in
 * the background (stale-while-revalidate): no reader waits for the upstream while a usable
 * snapshot exists. A failed refetch marks what is served `stale`; a good one replaces it.
 */
export class SnapshotCache<Value> {
  readonly #options: SnapshotCacheOptions<Value>;
  readonly #now: () => number;
  #current: Snapshot<Value> | undefined;
  /** `#current` marked stale, once a refetch has failed; cleared by the next good one. */
  #standIn: Snapshot<Value> | undefined;
  #refreshing: Promise<Snapshot<Value>> | undefined;
  #failure: { error: unknown; at: number } | undefined;

  constructor(options: SnapshotCacheOptions<Value>) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Whether `snapshot` is what a read would serve right now without fetching: the current one,
   * still within its TTL. Lets a cache of answers built from it know they are still good.
   */
  isCurrent(snapshot: object): boolean {
    const current = this.#current;
    return current === snapshot && this.#now() - current.fetchedAt.getTime() < this.#options.ttlMs;
  }

  /** The last good snapshot, fresh or not, without fetching. */
  get current(): Snapshot<Value> | undefined {
    return this.#current;
  }

  /** The snapshot to serve; `requestId` is passed on to a load this read starts. */
  get(requestId?: string): Promise<Snapshot<Value>> {
    const current = this.#current;
    const now = this.#now();
    if (current && now - current.fetchedAt.getTime() < this.#options.ttlMs) {
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
      const refreshing = this.#refresh(requestId).finally(() => {
        this.#refreshing = undefined;
      });
      // Readers served the last snapshot do not wait for this one; its failure is handled there.
      refreshing.catch(() => {});
      this.#refreshing = refreshing;
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

  async #refresh(requestId: string | undefined): Promise<Snapshot<Value>> {
    try {
      const value = await this.#options.load(requestId);
      const previous = this.#current;
      const next = { value, fetchedAt: new Date(this.#now()), stale: false };
      this.#current = next;
      this.#standIn = undefined;
      this.#failure = undefined;
      this.#options.onLoaded?.(previous, next);
      return next;
    } catch (error) {
      const previous = this.#current;
      if (previous && this.#now() - previous.fetchedAt.getTime() <= this.#options.maxStaleMs) {
        this.#options.onEvent?.('stale', error);
        this.#standIn ??= { ...previous, stale: true };
        return this.#standIn;
      }
      this.#failure = { error, at: this.#now() };
      throw error;
    }
  }
}
