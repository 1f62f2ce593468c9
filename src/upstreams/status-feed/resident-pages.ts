/**
 * Why a page was let go: over the byte budget, not asked for within the idle time, or no longer
 * configured as it was (removed from `STATUS_PAGES_FILE`, or its feed changed there).
 */
export type ReleaseReason = 'budget' | 'idle' | 'removed';

export interface ResidentPagesOptions<Page> {
  /** What all pages together may hold (`STATUS_PAGES_MAX_BYTES`). */
  readonly maxBytes: number;
  /** How long a page nobody follows stays after it was last asked for (`STATUS_PAGE_IDLE_MS`). */
  readonly idleMs: number;
  /** Told of each page let go, once it is no longer resident: it releases what the page holds. */
  readonly release: (slug: string, page: Page, reason: ReleaseReason) => void;
  /** Told of the resident pages and their bytes after every change, for metrics. */
  readonly onChange?: (pages: number, bytes: number) => void;
  /** @default Date.now */
  readonly now?: () => number;
}

interface Entry<Page> {
  readonly page: Page;
  bytes: number;
  usedAt: number;
  followers: number;
}

/**
 * The pages held in memory, within a byte budget: each counted by the bytes its owner says it
 * holds, the least recently used let go first when they are over it, and any not asked for within
 * the idle time let go when `releaseIdle` runs. A followed page (a subscription needs its
 * snapshots: change detection compares with the previous one) is never let go; its bytes count,
 * so the others make room for it.
 */
export class ResidentPages<Page> {
  readonly #options: ResidentPagesOptions<Page>;
  readonly #now: () => number;
  /** Pages nobody follows, least recently used first. */
  readonly #unfollowed = new Map<string, Entry<Page>>();
  readonly #followed = new Map<string, Entry<Page>>();
  #bytes = 0;
  #followedBytes = 0;

  constructor(options: ResidentPagesOptions<Page>) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Bytes of every resident page. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Bytes of the followed pages alone. */
  get followedBytes(): number {
    return this.#followedBytes;
  }

  get size(): number {
    return this.#unfollowed.size + this.#followed.size;
  }

  /** Page `slug` if resident, now its most recently used. */
  get(slug: string): Page | undefined {
    const followed = this.#followed.get(slug);
    if (followed) return followed.page;
    const entry = this.#unfollowed.get(slug);
    if (!entry) return undefined;
    this.#unfollowed.delete(slug);
    this.#unfollowed.set(slug, entry);
    entry.usedAt = this.#now();
    return entry.page;
  }

  /** Page `slug` if resident, its use left as it was. */
  peek(slug: string): Page | undefined {
    return (this.#followed.get(slug) ?? this.#unfollowed.get(slug))?.page;
  }

  isFollowed(slug: string): boolean {
    return this.#followed.has(slug);
  }

  /** Keeps `page` as `slug`'s, most recently used, holding `bytes`; others go if over budget. */
  add(slug: string, page: Page, bytes: number): void {
    this.#unfollowed.set(slug, { page, bytes, usedAt: this.#now(), followers: 0 });
    this.#bytes += bytes;
    this.#fit();
  }

  /** `page` now holds `bytes`; nothing when it is no longer `slug`'s resident page. */
  resize(slug: string, page: Page, bytes: number): void {
    const entry = this.#followed.get(slug) ?? this.#unfollowed.get(slug);
    if (entry?.page !== page) return;
    this.#bytes += bytes - entry.bytes;
    if (entry.followers > 0) this.#followedBytes += bytes - entry.bytes;
    entry.bytes = bytes;
    this.#fit();
  }

  /**
   * Keeps page `slug` until as many `unfollow` calls; `page`, holding `bytes`, when it is no
   * longer resident (let go as it was made, over the budget).
   */
  follow(slug: string, page: Page, bytes: number): void {
    let entry = this.#followed.get(slug) ?? this.#unfollowed.get(slug);
    if (!entry) {
      entry = { page, bytes, usedAt: this.#now(), followers: 0 };
      this.#bytes += bytes;
    }
    if (entry.followers === 0) {
      this.#unfollowed.delete(slug);
      this.#followed.set(slug, entry);
      this.#followedBytes += entry.bytes;
    }
    entry.followers += 1;
    this.#changed();
  }

  /** Ends one `follow`; the last makes the page the most recently used of those nobody follows. */
  unfollow(slug: string, page: Page): void {
    const entry = this.#followed.get(slug);
    if (entry?.page !== page || --entry.followers > 0) return;
    this.#followed.delete(slug);
    this.#followedBytes -= entry.bytes;
    entry.usedAt = this.#now();
    this.#unfollowed.set(slug, entry);
    this.#fit();
  }

  /** Lets go of every page nobody follows that was not asked for within the idle time. */
  releaseIdle(): void {
    const idleSince = this.#now() - this.#options.idleMs;
    for (const [slug, entry] of this.#unfollowed) {
      // Least recently used first: the rest were used later.
      if (entry.usedAt > idleSince) break;
      this.#release(slug, entry, 'idle');
    }
    this.#changed();
  }

  /**
   * Lets go of page `slug` now, followed or not (it left the configuration). Its followers'
   * `unfollow` then does nothing: the page they followed is no longer resident.
   */
  remove(slug: string): void {
    const followed = this.#followed.get(slug);
    if (followed) {
      this.#followed.delete(slug);
      this.#followedBytes -= followed.bytes;
      this.#unfollowed.set(slug, followed);
    }
    const entry = this.#unfollowed.get(slug);
    if (!entry) return;
    this.#release(slug, entry, 'removed');
    this.#changed();
  }

  /** Every resident page, followed or not. */
  *pages(): IterableIterator<Page> {
    for (const entry of this.#unfollowed.values()) yield entry.page;
    for (const entry of this.#followed.values()) yield entry.page;
  }

  #fit(): void {
    for (const [slug, entry] of this.#unfollowed) {
      if (this.#bytes <= this.#options.maxBytes) break;
      this.#release(slug, entry, 'budget');
    }
    this.#changed();
  }

  #release(slug: string, entry: Entry<Page>, reason: ReleaseReason): void {
    this.#unfollowed.delete(slug);
    this.#bytes -= entry.bytes;
    this.#options.release(slug, entry.page, reason);
  }

  #changed(): void {
    this.#options.onChange?.(this.size, this.#bytes);
  }
}
