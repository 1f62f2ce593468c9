import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * How long the heap in use right after a full collection stands for the heap in use. A full
 * collection of a 190 MiB heap of small objects took 210–340 ms here (2 cores, Node 24,
 * docs/performance.md), all of it with the event loop stopped: one this module asks for costs at
 * most that once per this long, 3% of the time at worst, and a reading is at most this old.
 */
const FRESH_MS = 10_000;

export interface LiveHeapOptions {
  /**
   * How long a reading after a full collection (V8's own, or one asked for here) is used before a
   * new one is needed.
   * @default 10000
   */
  readonly freshMs?: number;
  /**
   * The clock readings are timed by, ms.
   * @default performance.now
   */
  readonly now?: () => number;
}

/**
 * The heap in use by live objects, for admission rules: what `used_heap_size` says includes garbage
 * not yet collected, much of it in a gateway that answers a flood (58–69 MiB in use before each full
 * collection, 46–48 live after it, during 20,000 requests), which should never refuse a client.
 *
 * `bytes(line)` reads `used_heap_size`: at or under `line`, that is the answer (garbage only makes
 * it larger). Over it, the reading taken right after the last full collection is used if it is
 * under `freshMs` old: V8's own collections are watched (`PerformanceObserver`, entries of kind
 * major), and they come often when the heap fills. Otherwise a full collection is made now (with
 * the `gc` of a new context, after `--expose-gc`: Node's flags allow it at run time), and its
 * reading used: so a crowd of callers over the line costs one collection per `freshMs`, not one
 * each. What grows between two collections is not seen until the next: V8 collects before the heap
 * grows past its limit for the next collection, so the growth unseen is bounded by that limit.
 */
export class LiveHeap {
  readonly #freshMs: number;
  readonly #now: () => number;
  readonly #observer: PerformanceObserver;
  /** The heap in use right after the last full collection, and when that was. */
  #afterCollection: { bytes: number; at: number } | undefined;
  #collections = 0;

  constructor({ freshMs = FRESH_MS, now = () => performance.now() }: LiveHeapOptions = {}) {
    this.#freshMs = freshMs;
    this.#now = now;
    this.#observer = new PerformanceObserver((list) => {
      const major = list
        .getEntries()
        .some((entry) => (entry as { detail?: { kind?: number } }).detail?.kind === MAJOR);
      // Read when the entry comes, a turn after the collection: what came since counts too.
      if (major) this.#record();
    });
    this.#observer.observe({ entryTypes: ['gc'] });
  }

  /**
   * Bytes of heap in use, garbage left out when it matters: `used_heap_size` when it is at most
   * `line`, else the heap in use after a full collection at most `freshMs` old (made now if there
   * is none).
   */
  bytes(line: number): number {
    const used = getHeapStatistics().used_heap_size;
    if (used <= line) return used;
    const last = this.#afterCollection;
    if (last && this.#now() - last.at < this.#freshMs) return Math.min(used, last.bytes);
    const collect = collector();
    if (!collect) return last ? Math.min(used, last.bytes) : used;
    collect();
    this.#collections += 1;
    return this.#record();
  }

  /** Full collections asked for by `bytes`. */
  get collections(): number {
    return this.#collections;
  }

  /** Stops watching V8's collections. */
  close(): void {
    this.#observer.disconnect();
  }

  #record(): number {
    const bytes = getHeapStatistics().used_heap_size;
    this.#afterCollection = { bytes, at: this.#now() };
    return bytes;
  }
}

const MAJOR = constants.NODE_PERFORMANCE_GC_MAJOR;

/** V8's full collection, or `undefined` where the flag cannot be set. */
let collect: (() => void) | null | undefined;
function collector(): (() => void) | undefined {
  if (collect === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      collect = runInNewContext('gc') as () => void;
    } catch {
      collect = null;
    }
  }
  return collect ?? undefined;
}

/** The heap's limit in bytes (`--max-old-space-size` and the young generation's spaces). */
export const HEAP_LIMIT = getHeapStatistics().heap_size_limit;

let shared: LiveHeap | undefined;

/**
 * Bytes of heap in use by this process, garbage left out when it is over `line`: `LiveHeap.bytes`
 * of one reader the whole process shares. An admission rule compares it with the line it refuses
 * above: `liveHeapBytes(line) > line`; for work that needs `cost` bytes more,
 * `liveHeapBytes(line - cost) + cost > line`.
 */
export function liveHeapBytes(line: number): number {
  shared ??= new LiveHeap();
  return shared.bytes(line);
}
