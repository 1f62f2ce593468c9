import type { IncomingHttpHeaders } from 'node:http';

export interface RecordedRequest {
  readonly method: string;
  /** Path without origin or query, e.g. `/status/api/v2/summary.json`. */
  readonly path: string;
  /** The query string with its `?`, or an empty string. */
  readonly search: string;
  readonly headers: IncomingHttpHeaders;
  readonly time: Date;
}

export interface RequestLogOptions {
  /** Most recent requests kept in full; older ones are dropped but stay counted. */
  capacity?: number;
  /** Distinct paths counted individually; requests to further new paths count only in the total. */
  maxDistinctPaths?: number;
}

/** A bounded log, so a long benchmark run does not grow memory. Counts are exact. */
export class SimulatorRequestLog {
  readonly #capacity: number;
  readonly #maxDistinctPaths: number;
  #ring: RecordedRequest[] = [];
  #next = 0;
  #total = 0;
  #byPath = new Map<string, number>();
  #notModified = 0;
  #notModifiedByPath = new Map<string, number>();

  constructor(options: RequestLogOptions = {}) {
    this.#capacity = options.capacity ?? 10_000;
    this.#maxDistinctPaths = options.maxDistinctPaths ?? 10_000;
    if (!Number.isSafeInteger(this.#capacity) || this.#capacity < 1) {
      throw new RangeError('capacity must be a positive integer');
    }
  }

  record(entry: RecordedRequest): void {
    if (this.#ring.length < this.#capacity) this.#ring.push(entry);
    else this.#ring[this.#next] = entry;
    this.#next = (this.#next + 1) % this.#capacity;
    this.#total += 1;
    const count = this.#byPath.get(entry.path);
    if (count !== undefined) this.#byPath.set(entry.path, count + 1);
    else if (this.#byPath.size < this.#maxDistinctPaths) this.#byPath.set(entry.path, 1);
  }

  /** A request to `path` was answered `304 Not Modified`. */
  recordNotModified(path: string): void {
    this.#notModified += 1;
    const count = this.#notModifiedByPath.get(path);
    if (count !== undefined) this.#notModifiedByPath.set(path, count + 1);
    else if (this.#notModifiedByPath.size < this.#maxDistinctPaths) {
      this.#notModifiedByPath.set(path, 1);
    }
  }

  notModifiedCount(path?: string): number {
    return path === undefined ? this.#notModified : (this.#notModifiedByPath.get(path) ?? 0);
  }

  /** Kept requests, oldest first. */
  entries(): RecordedRequest[] {
    if (this.#ring.length < this.#capacity) return [...this.#ring];
    return [...this.#ring.slice(this.#next), ...this.#ring.slice(0, this.#next)];
  }

  count(path?: string): number {
    return path === undefined ? this.#total : (this.#byPath.get(path) ?? 0);
  }

  byPath(): Record<string, number> {
    return Object.fromEntries(this.#byPath);
  }

  reset(): void {
    this.#ring = [];
    this.#next = 0;
    this.#total = 0;
    this.#byPath = new Map();
    this.#notModified = 0;
    this.#notModifiedByPath = new Map();
  }
}
