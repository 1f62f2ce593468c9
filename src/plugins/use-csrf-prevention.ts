import type { Plugin } from 'graphql-yoga';
import { refusalBody } from '../errors/refusal.js';

/** The content types a browser may send cross-site without a CORS preflight. */
const SIMPLE_CONTENT_TYPES = new Set([
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
]);

/**
 * Refuses POSTs that a browser could send from another site without asking first (a form post, a
 * `text/plain` fetch): such a request would carry the user's cookies, above all the verification
 * session, and run an operation. A POST with `Content-Type: application/json`, as every GraphQL
 * client and GraphiQL send, always needs a CORS preflight, which `CORS_ORIGINS` governs, so it
 * passes without extra headers. GETs can only run queries (Yoga refuses mutations over GET).
 */
export function useCsrfPrevention(): Plugin {
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      if (request.method !== 'POST') return;
      const mediaType = (request.headers.get('content-type') ?? '')
        .split(';')[0]
        ?.trim()
        .toLowerCase();
      if (mediaType && !SIMPLE_CONTENT_TYPES.has(mediaType)) return;
      endResponse(
        new fetchAPI.Response(
          refusalBody(
            'CSRF_BLOCKED',
            'This request was blocked as a possible cross-site request forgery: send operations as JSON with Content-Type: application/json.',
          ),
          { status: 400, headers: { 'content-type': 'application/json; charset=utf-8' } },
        ),
      );
    },
  };
}
