import { pageSlugOf, type StatusChangeEvent } from '../core/status/change-event.js';

export interface ChangeLogOptions {
  /**
   * When page `slug` was last made resident (its feed made), or undefined while it is not: a page
   * let go finds no changes until it is made again, and its first load after that is a baseline.
   */
  readonly residentSince: (slug: string) => number | undefined;
  /** @default 100 */
  readonly maxEventsPerPage?: number;
  /** @default 900000 (15 minutes) */
  readonly windowMs?: number;
  /** @default 4 MiB */
  readonly maxBytes?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

interface Entry {
  readonly event: StatusChangeEvent;
  readonly detectedAt: number;
  readonly loggedAt: number;
  readonly bytes: number;
  dropped: boolean;
}

interface PageLog {
  readonly entries: Entry[];
  /** The newest change dropped from the log: what came after it is all here. */
  droppedUpTo: number;
  /** The newest change ever logged, kept when it is dropped. */
  latest: number;
}

/** What changed on some pages after a time: every change, or that the log no longer knows. */
export type ChangesSince =
  | { readonly known: true; readonly events: readonly StatusChangeEvent[] }
  | { readonly known: false; readonly knownSince: number };

/**
 * The recent changes of each page, in the order they came, so that a subscription that names the
 * time its client's query was answered from (`since`, that answer's `fetchedAt`) can begin with
 * every change found after it. Bounded: per page the last `maxEventsPerPage` changes of the last
 * `windowMs`, all pages together `maxBytes`, oldest first out. A page's log knows what changed
 * since a time only when nothing after that time was dropped, the page has been resident all along
 * (a page let go finds no changes) and the log itself was running.
 */
export class ChangeLog {
  readonly #options: Required<ChangeLogOptions>;
  readonly #pages = new Map<string, PageLog>();
  /** Every entry in the order it came, for the byte bound and the window (oldest first). */
  readonly #order: Entry[] = [];
  #head = 0;
  #bytes = 0;
  readonly #startedAt: number;

  constructor(options: ChangeLogOptions) {
    this.#options = {
      maxEventsPerPage: 100,
      windowMs: 15 * 60_000,
      maxBytes: 4 * 1024 * 1024,
      now: Date.now,
      ...options,
    };
    this.#startedAt = this.#options.now();
  }

  record(event: StatusChangeEvent): void {
    const slug = pageSlugOf(event);
    let page = this.#pages.get(slug);
    if (!page) {
      page = { entries: [], droppedUpTo: Number.NEGATIVE_INFINITY, latest: 0 };
      this.#pages.set(slug, page);
    }
    const detectedAt = Date.parse(event.detectedAt);
    // What the event holds, twice its JSON text: the records are small objects and short strings.
    const bytes = 2 * JSON.stringify(event).length;
    const entry: Entry = {
      event,
      detectedAt,
      loggedAt: this.#options.now(),
      bytes,
      dropped: false,
    };
    page.entries.push(entry);
    page.latest = Math.max(page.latest, detectedAt);
    this.#order.push(entry);
    this.#bytes += bytes;
    if (page.entries.length > this.#options.maxEventsPerPage) this.#drop(page.entries[0] as Entry);
    this.#trim();
  }

  /**
   * The changes of `slugs` found after `since` (ms), in the order they came, or, when the log does
   * not know them all, since when it would.
   */
  since(slugs: readonly string[], since: number): ChangesSince {
    this.#trim();
    let knownSince = this.#startedAt;
    const entries: Entry[] = [];
    for (const slug of slugs) {
      const page = this.#pages.get(slug);
      const resident = this.#options.residentSince(slug) ?? Number.POSITIVE_INFINITY;
      knownSince = Math.max(knownSince, resident, page?.droppedUpTo ?? knownSince);
      for (const entry of page?.entries ?? []) if (entry.detectedAt > since) entries.push(entry);
    }
    if (since < knownSince) return { known: false, knownSince };
    if (slugs.length > 1) entries.sort((a, b) => a.loggedAt - b.loggedAt);
    return { known: true, events: entries.map((entry) => entry.event) };
  }

  /** The newest change found on page `slug`, ms; 0 when none was. */
  latest(slug: string): number {
    return this.#pages.get(slug)?.latest ?? 0;
  }

  #drop(entry: Entry): void {
    if (entry.dropped) return;
    entry.dropped = true;
    this.#bytes -= entry.bytes;
    const page = this.#pages.get(pageSlugOf(entry.event)) as PageLog;
    page.entries.splice(page.entries.indexOf(entry), 1);
    page.droppedUpTo = Math.max(page.droppedUpTo, entry.detectedAt);
  }

  /** Drops what is past the window or the bytes, oldest first, and what was dropped already. */
  #trim(): void {
    const oldest = this.#options.now() - this.#options.windowMs;
    for (let entry = this.#order[this.#head]; entry; entry = this.#order[this.#head]) {
      if (!entry.dropped && entry.loggedAt >= oldest && this.#bytes <= this.#options.maxBytes) {
        break;
      }
      this.#drop(entry);
      this.#head += 1;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#order.length) {
      this.#order.splice(0, this.#head);
      this.#head = 0;
    }
  }
}
