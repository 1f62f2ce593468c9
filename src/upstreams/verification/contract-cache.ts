import type { LookupAnswer } from './apiv2.js';
import type { Contract } from './model.js';

export interface ContractCacheOptions {
  /**
   * Bytes of lookups kept at most (an entry counts its upstream body, its key and a fixed
   * overhead); past it the least recently used go first. 0 keeps nothing.
   */
  readonly maxBytes: number;
  /** How long a lookup is served without asking the service. */
  readonly ttlMs: number;
  /** Asks the service, conditionally when `etag` is given. */
  readonly load: (
    chainId: string,
    address: string,
    etag: string | null,
    requestId: string | undefined,
  ) => Promise<LookupAnswer>;
}

interface Entry {
  readonly contract: Contract | null;
  readonly etag: string | null;
  readonly bytes: number;
  fetchedAt: number;
}

/** What an entry costs beside its body: the objects, the map slot, the dates. */
const ENTRY_OVERHEAD_BYTES = 512;

/**
 * Contract lookups kept in memory, bounded in bytes. A lookup is fresh for `ttlMs`; after that it
 * is asked again with the service's ETag (`If-None-Match`), and a `304 Not Modified` renews it
 * without a body. Lookups of the same contract at the same time share one request; a failed one
 * is not kept.
 */
export class ContractCache {
  readonly #options: ContractCacheOptions;
  /** Least recently used first. */
  readonly #entries = new Map<string, Entry>();
  readonly #loading = new Map<string, Promise<Contract | null>>();
  #bytes = 0;

  constructor(options: ContractCacheOptions) {
    this.#options = options;
  }

  get(chainId: string, address: string, requestId?: string): Promise<Contract | null> {
    const key = keyOf(chainId, address);
    const entry = this.#entries.get(key);
    if (entry && Date.now() - entry.fetchedAt < this.#options.ttlMs) {
      this.#touch(key, entry);
      return Promise.resolve(entry.contract);
    }
    const loading = this.#loading.get(key);
    if (loading) return loading;
    const load = this.#load(key, chainId, address, entry, requestId).finally(() =>
      this.#loading.delete(key),
    );
    this.#loading.set(key, load);
    return load;
  }

  /** Forgets a contract (it was just verified: a lookup that said "not verified" is wrong now). */
  delete(chainId: string, address: string): void {
    this.#remove(keyOf(chainId, address));
  }

  async #load(
    key: string,
    chainId: string,
    address: string,
    entry: Entry | undefined,
    requestId: string | undefined,
  ): Promise<Contract | null> {
    const answer = await this.#options.load(chainId, address, entry?.etag ?? null, requestId);
    if (!answer.modified) {
      if (!entry) return null;
      entry.fetchedAt = Date.now();
      if (this.#entries.get(key) === entry) this.#touch(key, entry);
      return entry.contract;
    }
    this.#remove(key);
    const bytes = answer.bytes + key.length * 2 + ENTRY_OVERHEAD_BYTES;
    if (bytes <= this.#options.maxBytes) {
      this.#entries.set(key, {
        contract: answer.contract,
        etag: answer.etag,
        bytes,
        fetchedAt: Date.now(),
      });
      this.#bytes += bytes;
      this.#evict();
    }
    return answer.contract;
  }

  #touch(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  #evict(): void {
    for (const [key, entry] of this.#entries) {
      if (this.#bytes <= this.#options.maxBytes) return;
      this.#entries.delete(key);
      this.#bytes -= entry.bytes;
    }
  }
}

const keyOf = (chainId: string, address: string) => `${chainId}:${address.toLowerCase()}`;
