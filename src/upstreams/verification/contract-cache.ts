import { LRUCache } from 'lru-cache';
import type { LookupAnswer, SourcifyApiV2 } from './apiv2.js';
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
  readonly load: SourcifyApiV2['lookUp'];
}

/** The lookup a fetch makes: the contract as its first caller wrote it, and that caller's request. */
interface Lookup {
  readonly chainId: string;
  readonly address: string;
  readonly requestId: string | undefined;
}

/** What an entry costs beside its body: the objects, the map slot, the dates. */
const ENTRY_OVERHEAD_BYTES = 512;

/**
 * Contract lookups kept in memory, bounded in bytes. A lookup is fresh for `ttlMs`; after that it
 * is asked again with the service's ETag (`If-None-Match`), and a `304 Not Modified` renews it
 * without a body. Lookups of the same contract at the same time share one request; a failed one
 * is not kept, and leaves the entry it was renewing for the next to renew.
 */
export function createContractCache({ maxBytes, ttlMs, load }: ContractCacheOptions) {
  const entries = new LRUCache<string, LookupAnswer, Lookup>({
    // lru-cache needs a positive bound; no entry is as small as 1 byte, so 1 keeps nothing.
    maxSize: Math.max(1, maxBytes),
    sizeCalculation: (entry) => entry.bytes,
    ttl: ttlMs,
    noDeleteOnFetchRejection: true,
    // A lookup under way when its contract is forgotten (`delete`) still answers its callers.
    ignoreFetchAbort: true,
    fetchMethod: async (key, stale, { context: { chainId, address, requestId } }) => {
      const answer = await load(chainId, address, stale?.etag ?? null, requestId);
      if (answer === 'unchanged') return stale;
      return { ...answer, bytes: answer.bytes + key.length * 2 + ENTRY_OVERHEAD_BYTES };
    },
  });

  return {
    async get(chainId: string, address: string, requestId?: string): Promise<Contract | null> {
      const entry = await entries.fetch(keyOf(chainId, address), {
        context: { chainId, address, requestId },
        // `ttlMs` 0: every lookup asks the service (lru-cache reads a ttl of 0 as "never stale").
        forceRefresh: ttlMs === 0,
      });
      return entry?.contract ?? null;
    },

    /** Estimated bytes of the lookups kept: what `maxBytes` bounds (`npm run bench:caches`). */
    get bytes(): number {
      return entries.calculatedSize;
    },

    /** Forgets a contract (it was just verified: a lookup that said "not verified" is wrong now). */
    delete(chainId: string, address: string): void {
      entries.delete(keyOf(chainId, address));
    },
  };
}

export type ContractCache = ReturnType<typeof createContractCache>;

const keyOf = (chainId: string, address: string) => `${chainId}:${address.toLowerCase()}`;
