import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { ContentEncoding } from './content-encoding.js';

/** Answers up to this size go out uncoded: coding them saves less than it costs. */
export const LARGEST_UNCODED = 1024;

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** One form of an answer, ready to send. */
export interface Representation {
  readonly encoding: ContentEncoding;
  readonly body: Buffer;
  /** A strong validator: the hash of the answer, suffixed by the coding (`"…-br"`). */
  readonly etag: string;
}

/**
 * An answer's bytes in each coding worth sending, made once: the identity bytes always, brotli and
 * gzip beside them for answers above `LARGEST_UNCODED` when they are smaller. The ETag is a hash
 * of the identity bytes, so an answer rebuilt with the same bytes (the feed refetched, nothing
 * changed) keeps it, and a client's `If-None-Match` still matches.
 */
export interface EncodedAnswer {
  readonly contentType: string;
  /** Hash of the identity bytes (base64url), the ETag's core. */
  readonly hash: string;
  /** Bytes held across the representations, for memory accounting. */
  readonly size: number;
  /** The form to send for a negotiated coding: that coding when made, else the identity bytes. */
  representation(encoding: ContentEncoding): Representation;
}

/** Kept answers up to this size get brotli's best quality; larger ones a quality 20 times faster. */
const BEST_BROTLI_UP_TO = 256 * 1024;

/** How hard to compress: once for an answer kept and served many times, or for one request. */
export type EncodingEffort = 'kept' | 'once';

/** The hash an `EncodedAnswer` of these bytes would have. */
export const answerHash = (body: Buffer): string =>
  createHash('sha256').update(body).digest('base64url').slice(0, 32);

/**
 * Codes `body` in `encodings` (off the main thread, in libuv's pool) and returns its
 * representations. `kept` answers get brotli's best quality up to 256 KiB, then a faster one (the
 * 9 MB GraphiQL page takes about 0.3 s at quality 5, over 1 s at 9).
 */
export async function encodeAnswer(
  body: Buffer,
  contentType: string,
  encodings: readonly Exclude<ContentEncoding, 'identity'>[] = ['br', 'gzip'],
  effort: EncodingEffort = 'kept',
  hash: string = answerHash(body),
): Promise<EncodedAnswer> {
  const representations = new Map<ContentEncoding, Representation>();
  const identity: Representation = { encoding: 'identity', body, etag: `"${hash}"` };
  representations.set('identity', identity);
  if (body.byteLength > LARGEST_UNCODED) {
    const coded = await Promise.all(
      encodings.map(async (encoding) => ({
        encoding,
        body: await compress(body, encoding, effort),
      })),
    );
    for (const { encoding, body: codedBody } of coded) {
      if (codedBody.byteLength < body.byteLength) {
        representations.set(encoding, { encoding, body: codedBody, etag: `"${hash}-${encoding}"` });
      }
    }
  }
  let size = 0;
  for (const { body: bytes } of representations.values()) size += bytes.byteLength;
  return {
    contentType,
    hash,
    size,
    representation: (encoding) => representations.get(encoding) ?? identity,
  };
}

/** `body` in a coding other than identity, compressed in libuv's pool. */
export function compress(
  body: Buffer,
  encoding: Exclude<ContentEncoding, 'identity'>,
  effort: EncodingEffort,
): Promise<Buffer> {
  if (encoding === 'gzip') return gzipped(body, { level: effort === 'kept' ? 9 : 6 });
  const quality = effort === 'once' ? 4 : body.byteLength <= BEST_BROTLI_UP_TO ? 11 : 5;
  return brotli(body, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
    },
  });
}

/**
 * Whether an `If-None-Match` header names `etag` (or is `*`): then the client has the answer, and
 * gets 304. Weak comparison, as RFC 9110 §13.1.2 asks: `W/"x"` matches `"x"`.
 */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  for (const tag of header.split(',')) {
    const trimmed = tag.trim();
    if ((trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed) === etag) return true;
  }
  return false;
}
