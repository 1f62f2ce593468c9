import type { CacheabilityRecord } from '../../schema/plugins/cacheability.js';

/*
 * The one place that decides whether a finished answer may be served again from memory; what its
 * execution allows is collected by the schema's cacheability plugin (`CacheabilityRecord`).
 */

/** Media types of answers that are one complete JSON document. */
const COMPLETE_JSON = /^application\/(graphql-response\+)?json\b/i;

/** Whether an answer is one complete JSON document; anything else is streamed, never buffered. */
export const isCompleteJson = (contentType: string | null): boolean =>
  contentType !== null && COMPLETE_JSON.test(contentType);

/** Whether a finished answer may be kept and served again while its snapshots are current. */
export function isCacheableAnswer(
  record: CacheabilityRecord,
  response: Response,
  body: Buffer,
): boolean {
  return (
    response.status === 200 &&
    isCompleteJson(response.headers.get('content-type')) &&
    !response.headers.has('set-cookie') &&
    record.cacheable &&
    !hasErrors(body)
  );
}

function hasErrors(body: Buffer): boolean {
  try {
    return (JSON.parse(body.toString('utf8')) as { errors?: unknown }).errors !== undefined;
  } catch {
    return true;
  }
}
