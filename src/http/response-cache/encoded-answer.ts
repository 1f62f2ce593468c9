import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

/** Answers up to this size go out uncoded: coding them saves less than it costs. */
export const LARGEST_UNCODED = 1024;

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** The content codings the gateway answers in. */
export type ContentEncoding = 'br' | 'gzip' | 'identity';

/**
 * The headers of every kept answer, by name, in the order its list holds them (`headerListOf`);
 * `Content-Encoding` follows them in a coded form.
 */
const KEPT_HEADERS = [
  'content-type',
  'content-length',
  'etag',
  'cache-control',
  'vary',
  'x-request-id',
] as const;

/** A header every kept answer carries. */
export type KeptHeader = (typeof KEPT_HEADERS)[number];

/**
 * Where `Representation.headers` holds the value of header `name`: a sender fills in the values
 * that change with each answer there (`Cache-Control`, `X-Request-Id`). Computed once, into a
 * constant, by whoever writes a value.
 */
export const valueIndexOf = (name: KeptHeader): number => KEPT_HEADERS.indexOf(name) * 2 + 1;

/** Answers up to this size are also kept as text (see `Representation.text`). */
const LARGEST_SENT_AS_TEXT = 8 * 1024;

/** One form of an answer, ready to send. */
export interface Representation {
  readonly body: Buffer;
  /**
   * The same bytes as a Latin-1 string, for a small body: node:http then sends the header and the
   * body in one write instead of a vectored write of two buffers, a measurable share of a hit.
   * Larger bodies go as the buffer, which is not copied again.
   */
  readonly text: string | undefined;
  /**
   * Its answer headers as node:http's flat list (name, value, name, value…), made once from the
   * values by name (`KEPT_HEADERS`); the values of `Cache-Control` and `X-Request-Id` are filled in
   * for each answer at their `valueIndexOf` just before `writeHead`, which reads the list at once
   * and keeps nothing of it. A list rather than an object: node reads it by index, where an object
   * costs a key enumeration and a lookup per header, and one object less per hit.
   */
  readonly headers: string[];
  /** A strong validator: the hash of the answer, suffixed by the coding (`"…-br"`). */
  readonly etag: string;
  /** Its `Vary` header, which a 304 repeats. */
  readonly vary: string;
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

/**
 * Brotli's quality. Measured on the page tree (17,312 bytes; 100,147 on the large feed): quality 5
 * gives 2,240 bytes in 0.3 ms (9,697 in 0.9 ms), quality 11 2,015 in 23 ms (8,695 in 131 ms). A
 * kept answer is rebuilt at every refetch of its feed (its `fetchedAt` changes), so 10% fewer bytes
 * are not worth 80 times the time. The 9 MB GraphiQL page takes 0.3 s.
 */
const BROTLI_QUALITY = 5;

/** The hash an `EncodedAnswer` of these bytes would have. */
export const answerHash = (body: Buffer): string =>
  createHash('sha256').update(body).digest('base64url').slice(0, 32);

/**
 * Codes `body` in brotli and gzip (off the main thread, in libuv's pool) and returns its
 * representations, each with `vary` as its `Vary` header; `hash` when the caller has it already.
 */
export async function encodeAnswer(
  body: Buffer,
  contentType: string,
  vary: string,
  hash = answerHash(body),
): Promise<EncodedAnswer> {
  const identity = representationOf(contentType, 'identity', body, hash, vary);
  const representations = new Map<ContentEncoding, Representation>([['identity', identity]]);
  if (body.byteLength > LARGEST_UNCODED) {
    await Promise.all(
      (['br', 'gzip'] as const).map(async (encoding) => {
        const coded = ownBytes(await compress(body, encoding));
        if (coded.byteLength < body.byteLength) {
          representations.set(encoding, representationOf(contentType, encoding, coded, hash, vary));
        }
      }),
    );
  }
  let size = 0;
  for (const { body: bytes, text } of representations.values()) {
    size += bytes.byteLength + (text?.length ?? 0);
  }
  return {
    contentType,
    hash,
    size,
    representation: (encoding) => representations.get(encoding) ?? identity,
  };
}

/**
 * `bytes` in memory of their own: zlib's output is a view of its 64 KiB output chunk, which a kept
 * answer would hold whole (the brotli form of a 9 KB answer, 262 bytes, held 64 KiB).
 */
function ownBytes(bytes: Buffer): Buffer {
  if (bytes.byteLength === bytes.buffer.byteLength) return bytes;
  const own = Buffer.allocUnsafeSlow(bytes.byteLength);
  bytes.copy(own);
  return own;
}

function representationOf(
  contentType: string,
  encoding: ContentEncoding,
  body: Buffer,
  hash: string,
  vary: string,
): Representation {
  const etag = encoding === 'identity' ? `"${hash}"` : `"${hash}-${encoding}"`;
  const headers = headerListOf({
    'content-type': contentType,
    'content-length': String(body.byteLength),
    etag,
    // Filled in for each answer.
    'cache-control': '',
    vary,
    'x-request-id': '',
  });
  if (encoding !== 'identity') headers.push('content-encoding', encoding);
  return {
    body,
    text: body.byteLength <= LARGEST_SENT_AS_TEXT ? body.toString('latin1') : undefined,
    etag,
    vary,
    headers,
  };
}

/** A kept answer's headers as node:http's flat list, in the order of `KEPT_HEADERS`. */
function headerListOf(values: Readonly<Record<KeptHeader, string>>): string[] {
  const list: string[] = [];
  for (const name of KEPT_HEADERS) list.push(name, values[name]);
  return list;
}

/** `body` in a coding other than identity, compressed in libuv's pool. */
export function compress(
  body: Buffer,
  encoding: Exclude<ContentEncoding, 'identity'>,
): Promise<Buffer> {
  if (encoding === 'gzip') return gzipped(body);
  return brotli(body, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
    },
  });
}
