import { createHash } from 'node:crypto';
import type { SimulatorResponse, UpstreamRequest } from '../upstream.js';

/*
 * Conditional GETs as status page hosts answer them.
 *
 * Statuspage (Atlassian) is a Rails application: Rack's ETag middleware gives every 200 answer a
 * weak ETag of 32 hex digits (a digest of the body), and `Rack::ConditionalGet` answers a GET or
 * HEAD whose `If-None-Match` is that ETag, exactly as sent, with `304 Not Modified`: no body, no
 * `Content-Type`. Captured answers of www.githubstatus.com, 2020 and 2026, carry
 * `etag: W/"190e96564a38a17b670f76ea3b77af44"` and `etag: W/"f7a0dfe2507f90344b5d11c605fa1fc7"`,
 * and no `Last-Modified`. A change to the page changes the body, so the ETag.
 *
 * A page served as static files (a Statuspage-compatible feed on a plain web server or object
 * store) sends `Last-Modified` instead, the time its file was written, and answers an
 * `If-Modified-Since` not before it with 304.
 */

/** Rack's weak ETag of a body: `W/"` and 32 hex digits of its digest. */
export function statuspageEtag(body: Buffer): string {
  return `W/"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
}

/** What identifies a document's version, as its host sends it. */
export interface DocumentVersion {
  readonly etag?: string;
  /** The time the document last changed, sent as `Last-Modified` (whole seconds). */
  readonly lastModified?: Date;
}

/**
 * `response` (a 200 of a document) with its `ETag` and `Last-Modified`, or the 304 a conditional
 * GET or HEAD gets when the version it names is still the one served: `If-None-Match` (one
 * entity-tag, compared as Rack does: the whole value) wins over `If-Modified-Since`, as RFC 9110
 * says and Rack does.
 */
export function conditionalAnswer(
  request: UpstreamRequest,
  response: SimulatorResponse,
  { etag, lastModified }: DocumentVersion,
): SimulatorResponse {
  const validators: Record<string, string> = {
    ...(etag !== undefined && { etag }),
    ...(lastModified !== undefined && { 'last-modified': lastModified.toUTCString() }),
  };
  const noneMatch = request.headers['if-none-match'];
  const modifiedSince = request.headers['if-modified-since'];
  const fresh =
    typeof noneMatch === 'string'
      ? etag !== undefined && noneMatch === etag
      : typeof modifiedSince === 'string' &&
        lastModified !== undefined &&
        Math.floor(lastModified.getTime() / 1000) * 1000 <= Date.parse(modifiedSince);
  if (fresh && (request.method === 'GET' || request.method === 'HEAD')) {
    const { 'content-type': _type, ...headers } = response.headers;
    return { status: 304, headers: { ...headers, ...validators }, body: Buffer.alloc(0) };
  }
  return { ...response, headers: { ...response.headers, ...validators } };
}
