/**
 * What an upstream said identifies the version of a document it sent (RFC 9110 §8.8): sent back
 * with the next request for it (`If-None-Match`, `If-Modified-Since`), so that an unchanged
 * document is answered `304 Not Modified`, without a body.
 */
export interface Validators {
  /** The `ETag` as sent, weak (`W/"…"`) or strong: `If-None-Match` compares weakly either way. */
  readonly etag?: string;
  /** The `Last-Modified` time, as an IMF-fixdate. */
  readonly lastModified?: string;
}

/**
 * What a conditional fetch resolves with when the upstream answered `304 Not Modified`: the
 * document whose validators it sent is still what the upstream serves.
 */
export const UNCHANGED: unique symbol = Symbol('unchanged');
export type Unchanged = typeof UNCHANGED;

/** The longest validator kept: real ones are 34 to 50 characters (`W/"<32 hex>"`, an HTTP-date). */
const MAX_VALIDATOR_LENGTH = 256;

/** An entity-tag (RFC 9110 §8.8.3): quoted, optionally weak, no control characters or quotes. */
const ENTITY_TAG = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

/**
 * How long before the answer's own time a `Last-Modified` must be for it to tell versions apart:
 * within the same second, a second change would carry the same time and a revalidation would
 * call it unchanged (RFC 9110 §8.8.2.2).
 */
const LAST_MODIFIED_MARGIN_MS = 1_000;

/** `value` when it is an entity-tag the gateway sends back as it came; `undefined` otherwise. */
export function entityTag(value: string | null | undefined): string | undefined {
  return value && value.length <= MAX_VALIDATOR_LENGTH && ENTITY_TAG.test(value)
    ? value
    : undefined;
}

/**
 * `value` as an IMF-fixdate when it is an HTTP-date at least a second before `answeredAt` (epoch
 * ms); `undefined` otherwise.
 */
export function lastModifiedTime(
  value: string | null | undefined,
  answeredAt: number,
): string | undefined {
  if (!value || value.length > MAX_VALIDATOR_LENGTH) return undefined;
  const time = Date.parse(value);
  if (!Number.isFinite(time) || time > answeredAt - LAST_MODIFIED_MARGIN_MS) return undefined;
  return new Date(time).toUTCString();
}

/**
 * The validators of an answer, from its `ETag` and `Last-Modified`; `undefined` when it has none
 * that can be used. A `Last-Modified` counts only when it is a second or more before the answer's
 * `Date` (or `receivedAt`, epoch ms, without one).
 */
export function validatorsOf(headers: Headers, receivedAt: number): Validators | undefined {
  const etag = entityTag(headers.get('etag'));
  const date = Date.parse(headers.get('date') ?? '');
  const lastModified = lastModifiedTime(
    headers.get('last-modified'),
    Number.isFinite(date) ? date : receivedAt,
  );
  if (etag === undefined && lastModified === undefined) return undefined;
  return {
    ...(etag !== undefined && { etag }),
    ...(lastModified !== undefined && { lastModified }),
  };
}

/** The request headers that ask for the document only if it is not the version `validators` name. */
export function conditionalHeaders(validators: Validators | undefined): Record<string, string> {
  return {
    ...(validators?.etag !== undefined && { 'if-none-match': validators.etag }),
    ...(validators?.lastModified !== undefined && { 'if-modified-since': validators.lastModified }),
  };
}
