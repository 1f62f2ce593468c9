import { LRUCache } from 'lru-cache';
import { stringBytes } from '../observability/heap-bytes.js';

/**
 * What one registered document costs besides its text: lru-cache's entry (its Map entry and array
 * slots), the 64-character hash that keys it and the two string headers. Measured on Node 24: a
 * million 4-character documents keyed by their hex hash hold 187 MB of heap in an `LRUCache`
 * (133 MB in a bare Map), so a store counting characters alone would let tiny documents take that
 * much; 10,000 documents of 57 characters, 248 bytes each (`npm run bench:caches`).
 */
export const ENTRY_OVERHEAD_BYTES = 192;

/**
 * APQ's registered documents, by hash, bounded in bytes (lru-cache's `maxSize`): each entry counts
 * its text (as V8 stores it: a byte a character, two once any is outside Latin-1) and
 * `ENTRY_OVERHEAD_BYTES`; the least recently used go first, and a document larger than the whole
 * bound is never kept. At the default 4 MiB that is at most about 21,000 of the smallest documents.
 */
export const registeredDocuments = (maxBytes: number) =>
  new LRUCache<string, string>({
    maxSize: maxBytes,
    sizeCalculation: (text) => ENTRY_OVERHEAD_BYTES + stringBytes(text),
  });
