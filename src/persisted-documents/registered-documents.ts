import { LRUCache } from 'lru-cache';

/**
 * What one registered document costs besides its text: lru-cache's entry (its Map entry and array
 * slots), the 64-character hash that keys it and the two string headers. Measured on Node 24: a
 * million 4-character documents keyed by their hex hash hold 187 MB of heap in an `LRUCache`
 * (133 MB in a bare Map), so a store counting characters alone would let tiny documents take that
 * much.
 */
export const ENTRY_OVERHEAD_BYTES = 224;

/**
 * APQ's registered documents, by hash, bounded in bytes (lru-cache's `maxSize`): each entry counts
 * its text (two bytes a character, as V8 may store it) and `ENTRY_OVERHEAD_BYTES`; the least
 * recently used go first, and a document larger than the whole bound is never kept. At the
 * default 4 MiB that is at most about 18,000 of the smallest documents.
 */
export const registeredDocuments = (maxBytes: number) =>
  new LRUCache<string, string>({
    maxSize: maxBytes,
    sizeCalculation: (text) => ENTRY_OVERHEAD_BYTES + 2 * text.length,
  });
