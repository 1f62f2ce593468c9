import type { Plugin } from 'graphql-yoga';
import { refusal, refusalBody } from '../errors/refusal.js';
import { BodyTimeoutError, BodyTooLargeError, readBodyText } from '../read-body-text.js';

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
  /**
   * Bodies above `maxBytes` accepted for the operations `accepts` takes (source verifications):
   * up to `maxBytes` of their own, declared by `content-length`, and `maxConcurrent` at once
   * (more get 503 `TOO_MANY_UPLOADS`); any other operation that large gets 413 as before.
   * @default undefined (none)
   */
  readonly uploads?: UploadLimits | undefined;
}

export interface UploadLimits {
  readonly maxBytes: number;
  readonly maxConcurrent: number;
  /** Whether a parsed body's operation may be that large. */
  readonly accepts: (body: Record<string, unknown>) => boolean;
}

/**
 * Caps the size of request bodies, which Yoga does not: a declared `content-length` over the cap is
 * refused before the body is read, and a body sent without one is read only up to the cap. Node
 * drains whatever the client still sends after the 413.
 */
export function useBodyLimit({
  maxBytes = 262_144,
  timeoutMs = 10_000,
  uploads,
}: BodyLimitOptions = {}): Plugin {
  const tooLarge = `The request body is larger than the limit of ${maxBytes} bytes.`;
  /** The requests holding an upload slot, each until its answer or its abort. */
  const large = new WeakSet<Request>();
  let uploading = 0;
  const release = (request: Request) => {
    if (large.delete(request)) uploading -= 1;
  };
  return {
    onRequest({ request, endResponse, fetchAPI }) {
      const declared = Number(request.headers.get('content-length'));
      if (declared <= maxBytes) return;
      const refuse = (
        code: 'PAYLOAD_TOO_LARGE' | 'TOO_MANY_UPLOADS',
        message: string,
        status: number,
      ) =>
        endResponse(
          new fetchAPI.Response(refusalBody(code, message), {
            status,
            headers: { 'content-type': 'application/json; charset=utf-8' },
          }),
        );
      if (!uploads || request.method !== 'POST' || declared > uploads.maxBytes) {
        refuse(
          'PAYLOAD_TOO_LARGE',
          uploads
            ? `${tooLarge} A source verification may send up to ${uploads.maxBytes} bytes.`
            : tooLarge,
          413,
        );
        return;
      }
      if (uploading >= uploads.maxConcurrent) {
        refuse(
          'TOO_MANY_UPLOADS',
          `${uploads.maxConcurrent} large request bodies are being handled already (VERIFY_MAX_CONCURRENT_UPLOADS); retry shortly.`,
          503,
        );
        return;
      }
      uploading += 1;
      large.add(request);
      request.signal?.addEventListener('abort', () => release(request), { once: true });
    },
    onResponse({ request }) {
      release(request);
    },
    onRequestParse({ request, setRequestParser }) {
      if (request.method !== 'POST') return;
      const contentType = request.headers.get('content-type');
      // Every body is read through the same cap, whatever parser it is for; only a JSON body
      // holding an upload slot may be read past `maxBytes`.
      const readBounded = async (request: Request, limit = maxBytes): Promise<string> => {
        try {
          return await readBodyText(request, { maxBytes: limit, timeoutMs });
        } catch (error) {
          if (error instanceof BodyTooLargeError) {
            throw refusal(
              'PAYLOAD_TOO_LARGE',
              limit > maxBytes
                ? `The request body is larger than the limit of ${limit} bytes for a source verification.`
                : tooLarge,
              413,
            );
          }
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
      const limit = uploads && large.has(request) ? uploads.maxBytes : maxBytes;
      setRequestParser(async (request) => {
        const text = await readBounded(request, limit);
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
        if (
          limit > maxBytes &&
          Buffer.byteLength(text) > maxBytes &&
          !uploads?.accepts(body as Record<string, unknown>)
        ) {
          throw refusal(
            'PAYLOAD_TOO_LARGE',
            `${tooLarge} Only a source verification (verifyContractFromSource, verifyContractFromMetadata, sent as a query with variables) may be larger.`,
            413,
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
