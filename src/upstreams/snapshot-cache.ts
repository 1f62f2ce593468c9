/** A value and when the gateway fetched it. */
export interface Snapshot<Value> {
  readonly value: Value;
  readonly fetchedAt: Date;
  /** True when a refresh failed and this older snapshot is served instead (stale-if-error). */
  readonly stale: boolean;
}

export type SnapshotCacheEvent = 'hit' | 'miss' | 'coalesced' | 'stale';

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
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * One upstream document shared by all requests: fresh for `ttlMs`, fetched once however many
 * requests ask for it at the same time, and kept on hand to stand in while the upstream fails.
 */
export class SnapshotCache<Value> {
  readonly #options: SnapshotCacheOptions<Value>;
  readonly #now: () => number;
  #current: Snapshot<Value> | undefined;
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
    if (current && this.#now() - current.fetchedAt.getTime() < this.#options.ttlMs) {
      this.#options.onEvent?.('hit');
      return Promise.resolve(current);
    }
    const failure = this.#failure;
    if (failure && this.#now() - failure.at < (this.#options.failureTtlMs ?? 0)) {
      return Promise.reject(failure.error);
    }
    if (this.#refreshing) {
      this.#options.onEvent?.('coalesced');
      return this.#refreshing;
    }
    this.#options.onEvent?.('miss');
    const refreshing = this.#refresh(requestId).finally(() => {
      this.#refreshing = undefined;
    });
    this.#refreshing = refreshing;
    return refreshing;
  }

  async #refresh(requestId: string | undefined): Promise<Snapshot<Value>> {
    try {
      const value = await this.#options.load(requestId);
      this.#current = { value, fetchedAt: new Date(this.#now()), stale: false };
      this.#failure = undefined;
      return this.#current;
    } catch (error) {
      const previous = this.#current;
      if (previous && this.#now() - previous.fetchedAt.getTime() <= this.#options.maxStaleMs) {
        this.#options.onEvent?.('stale', error);
        return { ...previous, stale: true };
      }
      this.#failure = { error, at: this.#now() };
      throw error;
    }
  }
}
