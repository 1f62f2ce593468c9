import { createHash } from 'node:crypto';
import type { SimulatorResponse, UpstreamRequest } from '../upstream.js';

/*
 * Express's ETags, as Sourcify's server sends them: `res.send` gives every body a weak ETag (the
 * `etag` package: its length in hex and a SHA-1), and answers a GET whose `If-None-Match` names it
 * with `304 Not Modified` and no body, for a 2xx answer only. Production `/v2/contract` answers
 * 304 to browsers (openscan-explorer/explorer#312).
 */

/** The `etag` package's weak tag of a body. */
function etagOf(body: Buffer): string {
  const hash = createHash('sha1').update(body).digest('base64').slice(0, 27);
  return `W/"${body.length.toString(16)}-${hash}"`;
}

/** Whether `If-None-Match` names `etag` (weak comparison, `*` for any), as `fresh` decides. */
function matches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === opaque);
}

/** The answer with its ETag, or the 304 a conditional GET gets when the tag still holds. */
export function withEtag(request: UpstreamRequest, response: SimulatorResponse): SimulatorResponse {
  if (request.method !== 'GET' && request.method !== 'HEAD') return response;
  if (response.body.length === 0 || response.headers.etag !== undefined) return response;
  const etag = etagOf(response.body);
  const fresh = response.status >= 200 && response.status < 300;
  const condition = request.headers['if-none-match'];
  if (fresh && typeof condition === 'string' && matches(condition, etag)) {
    const { 'content-type': _type, ...headers } = response.headers;
    return { status: 304, headers: { ...headers, etag }, body: Buffer.alloc(0) };
  }
  return { ...response, headers: { ...response.headers, etag } };
}
