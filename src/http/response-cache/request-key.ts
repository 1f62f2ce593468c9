import { hash } from 'node:crypto';

/**
 * A request's URL or body up to this size is its own key; a longer one is keyed by its SHA-256.
 * V8 hashes a string key at about 1.5 ns a character, for every request, since each brings a new
 * string, while SHA-256 costs a fixed 2,700 instructions or so (OpenSSL's set-up, the digest's
 * base64) before it reads a byte: 0.8 µs for the 934-byte page-tree body against 1.7 µs for the
 * body itself, 3 µs for 4.8 KB of `_entities` against 7.6 µs, but more than the tiny query's
 * 56-byte body costs as it is (callgrind, docs/performance.md).
 */
const LARGEST_LITERAL_KEY = 256;

/**
 * The key of a request's answer: its method, its `Accept` header and its URL (GET) or body (POST),
 * or their SHA-256 when longer than `LARGEST_LITERAL_KEY` (a collision is out of reach, so nothing
 * else is compared). The two kinds are told apart by the character before them.
 */
export function requestKey(
  method: 'GET' | 'POST',
  accept: string,
  request: string | Buffer,
): string {
  if (request.length <= LARGEST_LITERAL_KEY) {
    const text = typeof request === 'string' ? request : request.toString('latin1');
    return `${method} ${accept}\n=${text}`;
  }
  return `${method} ${accept}\n#${hash('sha256', request, 'base64url')}`;
}
