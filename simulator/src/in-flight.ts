/**
 * Requests in flight, by path: how many under a prefix now, and the most at once since the last
 * reset, for tests that bound how many requests a client sends at the same time. Paths are kept
 * only while their requests are in flight; a peak is kept per prefix asked about.
 */
export class InFlightRequests {
  readonly #paths = new Map<string, number>();
  /** Peaks of the prefixes asked about; every request updates the ones it falls under. */
  readonly #peaks = new Map<string, number>();

  /** Counts a request to `path` in; the returned function counts it out (once). */
  begin(path: string): () => void {
    this.#paths.set(path, (this.#paths.get(path) ?? 0) + 1);
    for (const prefix of this.#peaks.keys()) {
      if (path.startsWith(prefix)) {
        this.#peaks.set(prefix, Math.max(this.#peaks.get(prefix) ?? 0, this.#current(prefix)));
      }
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.#paths.get(path) ?? 1) - 1;
      if (left === 0) this.#paths.delete(path);
      else this.#paths.set(path, left);
    };
  }

  /** In flight under `prefix` now, and its peak; asking starts keeping its peak. */
  of(prefix: string): { current: number; peak: number } {
    const current = this.#current(prefix);
    const peak = Math.max(this.#peaks.get(prefix) ?? 0, current);
    this.#peaks.set(prefix, peak);
    return { current, peak };
  }

  /** Peaks start again from what is in flight now. */
  resetPeaks(): void {
    for (const prefix of this.#peaks.keys()) this.#peaks.set(prefix, this.#current(prefix));
  }

  #current(prefix: string): number {
    let count = 0;
    for (const [path, n] of this.#paths) if (path.startsWith(prefix)) count += n;
    return count;
  }
}
