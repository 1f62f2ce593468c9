/**
 * What one registered document costs besides its text: the Map entry, the 64-character hash that
 * keys it and the two string headers. Measured on Node 24: a million 4-character documents keyed
 * by their hex hash hold 133 MB of heap, so a store counting characters alone would let tiny
 * documents take that much.
 */
export const ENTRY_OVERHEAD_BYTES = 160;

/**
 * APQ's registered documents, by hash, bounded in bytes: each entry counts its text (two bytes a
 * character, as V8 may store it) and `ENTRY_OVERHEAD_BYTES`; the least recently used go first.
 * At the default 4 MiB that is at most about 26,000 of the smallest documents.
 */
export class RegisteredDocuments {
  readonly #documents = new Map<string, string>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Entries held. */
  get size(): number {
    return this.#documents.size;
  }

  /** Bytes the entries are counted for. */
  get bytes(): number {
    return this.#bytes;
  }

  get(hash: string): string | undefined {
    const text = this.#documents.get(hash);
    if (text !== undefined) {
      this.#documents.delete(hash);
      this.#documents.set(hash, text);
    }
    return text;
  }

  set(hash: string, text: string): void {
    const cost = costOf(text);
    if (cost > this.#maxBytes || this.#documents.has(hash)) return;
    this.#documents.set(hash, text);
    this.#bytes += cost;
    for (const [oldest, old] of this.#documents) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#documents.delete(oldest);
      this.#bytes -= costOf(old);
    }
  }
}

const costOf = (text: string) => ENTRY_OVERHEAD_BYTES + 2 * text.length;
