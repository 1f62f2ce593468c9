import type { Plugin } from 'graphql-yoga';
import { refusal, refusalBody } from '../errors/refusal.js';
import { BodyTimeoutError, BodyTooLargeError, readBodyText } from '../http/read-body-text.js';

export interface BodyLimitOptions {
  /**
   * Largest request body accepted; larger ones get 413.
   * @default 262144 (256 KiB)
   */
  readonly maxBytes?: number;
  /**
   * Time allowed for a client to send its whole body; slower ones get 408.
   * @default 10000
   */
  readonly timeoutMs?: number;
}

/**
 * Caps the size of request bodies, which Yoga does not: a declared `content-length` over the cap is
 * refused before the body is read, and a body sent without one is read only up to the cap. Node
 * drains whatever the client still sends after the 413.
 */
export function useBodyLimit({
  maxBytes = 262_144,
  timeoutMs = 10_000,
}: BodyLimitOptions = {}): Plugin {
  const tooLarge = `The request body is larger than the limit of ${maxBytes} bytes.`;
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      if (Number(request.headers.get('content-length')) > maxBytes) {
        endResponse(
          new fetchAPI.Response(refusalBody('PAYLOAD_TOO_LARGE', tooLarge), {
            status: 413,
            headers: { 'content-type': 'application/json; charset=utf-8' },
          }),
        );
      }
    },
    onRequestParse({ request, setRequestParser }) {
      if (request.method !== 'POST') return;
      const contentType = request.headers.get('content-type');
      // Every body is read through the same cap, whatever parser it is for.
      const readBounded = async (request: Request): Promise<string> => {
        try {
          return await readBodyText(request, { maxBytes, timeoutMs });
        } catch (error) {
          if (error instanceof BodyTooLargeError) throw refusal('PAYLOAD_TOO_LARGE', tooLarge, 413);
          if (error instanceof BodyTimeoutError) {
            throw refusal('REQUEST_TIMEOUT', 'The request body did not arrive in time.', 408);
          }
          throw error;
        }
      };
      if (isGraphQLDocument(contentType)) {
        setRequestParser(async (request) => ({ query: await readBounded(request) }));
        return;
      }
      if (!isJson(contentType)) return;
      setRequestParser(async (request) => {
        const text = await readBounded(request);
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          throw refusal('BAD_REQUEST', 'The request body is not valid JSON.', 400);
        }
        if (Array.isArray(body)) {
          throw refusal(
            'BAD_REQUEST',
            'Batched operations are not supported: send one operation per request.',
            400,
          );
        }
        if (typeof body !== 'object' || body === null) {
          throw refusal(
            'BAD_REQUEST',
            'The request body must be a JSON object with a "query".',
            400,
          );
        }
        return body;
      });
    },
  };
}

const isGraphQLDocument = (contentType: string | null) =>
  contentType !== null && /^application\/graphql\b(?!-)/i.test(contentType.trim());

const isJson = (contentType: string | null) =>
  contentType !== null && /^application\/(graphql\+)?json\b/i.test(contentType.trim());
