import type { Plugin } from 'graphql-yoga';
import type { ErrorCode } from '../errors/error-code.js';
import { RateLimitedError } from '../errors/rate-limited-error.js';
import { refusal, refusalBody } from '../errors/refusal.js';
import {
  type JsonBudget,
  JsonBudgetExceeded,
  jsonHeapBound,
  parseJsonWithin,
} from '../json-budget.js';
import { BodyTimeoutError, BodyTooLargeError, readBodyText } from '../read-body-text.js';

export interface BodyLimitOptions<ServerContext> {
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
   * What a JSON body may hold once parsed: a body over it is refused with 413 `JSON_TOO_COMPLEX`
   * before it is parsed, whatever its size.
   */
  readonly json: JsonBudget;
  /**
   * Heap the request bodies being handled may take together (`REQUEST_BODIES_HEAP_SHARE` of the
   * heap limit): each counts the most a JSON text of its declared length may take (`jsonHeapBound`;
   * `maxBytes` when it declares none) from before it is read to its answer. One that would not
   * fit is refused with 503 `SERVER_BUSY` (`TOO_MANY_UPLOADS` for an upload), unread.
   */
  readonly heapBytes: number;
  /**
   * Bodies above `maxBytes` accepted for the operations `accepts` takes (source verifications):
   * up to `maxBytes` of their own, declared by `content-length`, as many at once as `maxConcurrent`
   * and `heapBytes` allow (more get 503 `TOO_MANY_UPLOADS`); any other operation that large gets
   * 413 as before.
   * @default undefined (none)
   */
  readonly uploads?: UploadLimits<ServerContext> | undefined;
}

export interface UploadLimits<ServerContext> {
  readonly maxBytes: number;
  /** Uploads in flight at once, at most (`VERIFY_MAX_CONCURRENT_UPLOADS`). */
  readonly maxConcurrent: number;
  /** Whether a parsed body's operation may be that large. */
  readonly accepts: (body: Record<string, unknown>) => boolean;
  /** The operations `accepts` takes, named when a body too large for any other is refused. */
  readonly names: readonly string[];
  /**
   * Runs for an admitted upload before a byte of its body is read (the client's verification
   * allowance is taken here); a `RateLimitedError` it throws is the answer, 429 `RATE_LIMITED`.
   */
  readonly beforeRead?: (request: Request, serverContext: ServerContext) => void | Promise<void>;
}

/**
 * Caps the size of request bodies, which Yoga does not: a declared `content-length` over the cap is
 * refused before the body is read, and a body sent without one is read only up to the cap. Every
 * body is admitted by the heap it may take before it is read, all of them together within
 * `heapBytes`; a JSON body is parsed only within its budget of values and depth
 * (`parseJsonWithin`), which is what makes that heap known. Node drains whatever the client still
 * sends after a refusal.
 */
export function useBodyLimit<ServerContext extends object>({
  maxBytes = 262_144,
  timeoutMs = 10_000,
  json,
  heapBytes,
  uploads,
}: BodyLimitOptions<ServerContext>): Plugin<object, ServerContext> {
  const tooLarge = `The request body is larger than the limit of ${maxBytes} bytes.`;
  /** The requests whose bodies are admitted, each with the heap it counts until its answer. */
  const admitted = new WeakMap<Request, { readonly heap: number; readonly upload: boolean }>();
  let uploadsInFlight = 0;
  let heapInFlight = 0;
  const release = (request: Request) => {
    const body = admitted.get(request);
    if (body === undefined) return;
    admitted.delete(request);
    if (body.upload) uploadsInFlight -= 1;
    heapInFlight -= body.heap;
  };
  return {
    // Not async: a request within `maxBytes`, nearly all of them, goes on without a promise.
    onRequest({ request, serverContext, endResponse, fetchAPI }) {
      if (request.method !== 'POST') return;
      const length = request.headers.get('content-length');
      const declared = length === null ? maxBytes : Number(length);
      const refuse = (
        code: ErrorCode,
        message: string,
        status: number,
        { limit, retryAfter }: { limit?: string; retryAfter?: number } = {},
      ) =>
        endResponse(
          new fetchAPI.Response(refusalBody(code, message, limit ? { limit } : {}), {
            status,
            headers: {
              'content-type': 'application/json; charset=utf-8',
              ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
            },
          }),
        );
      const upload = declared > maxBytes;
      const heap = jsonHeapBound(declared, json);
      if (!upload) {
        if (heapInFlight + heap > heapBytes) {
          refuse(
            'SERVER_BUSY',
            'The request bodies being handled already take the memory set aside for them (REQUEST_BODIES_HEAP_SHARE); retry shortly.',
            503,
            { limit: 'REQUEST_BODIES_HEAP_SHARE', retryAfter: 1 },
          );
          return;
        }
        heapInFlight += heap;
        admitted.set(request, { heap, upload });
        return;
      }
      if (!uploads || declared > uploads.maxBytes) {
        refuse(
          'PAYLOAD_TOO_LARGE',
          uploads
            ? `${tooLarge} ${uploads.names.join(' or ')} may send up to ${uploads.maxBytes} bytes.`
            : tooLarge,
          413,
        );
        return;
      }
      if (uploadsInFlight >= uploads.maxConcurrent) {
        refuse(
          'TOO_MANY_UPLOADS',
          `${uploads.maxConcurrent} large request bodies are being handled already (VERIFY_MAX_CONCURRENT_UPLOADS); retry shortly.`,
          503,
          { limit: 'VERIFY_MAX_CONCURRENT_UPLOADS', retryAfter: 1 },
        );
        return;
      }
      if (heapInFlight + heap > heapBytes) {
        refuse(
          'TOO_MANY_UPLOADS',
          `The request bodies being handled already take the memory set aside for them (REQUEST_BODIES_HEAP_SHARE); retry shortly${heap > heapBytes ? ', or send a smaller input: this one alone needs more' : ''}.`,
          503,
          { limit: 'REQUEST_BODIES_HEAP_SHARE', retryAfter: 1 },
        );
        return;
      }
      uploadsInFlight += 1;
      heapInFlight += heap;
      admitted.set(request, { heap, upload });
      request.signal?.addEventListener('abort', () => release(request), { once: true });
      const { beforeRead } = uploads;
      if (!beforeRead) return;
      return (async () => {
        try {
          await beforeRead(request, serverContext);
        } catch (error) {
          release(request);
          if (!(error instanceof RateLimitedError)) throw error;
          refuse('RATE_LIMITED', error.message, 429, {
            retryAfter: error.retryAfterSeconds ?? undefined,
          });
        }
      })();
    },
    onResponse({ request }) {
      release(request);
    },
    onRequestParse({ request, setRequestParser }) {
      if (request.method !== 'POST') return;
      const contentType = request.headers.get('content-type');
      // Every body is read through the same cap, whatever parser it is for; only a JSON body
      // admitted as an upload may be read past `maxBytes`.
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
      const limit = uploads && admitted.get(request)?.upload ? uploads.maxBytes : maxBytes;
      setRequestParser(async (request) => {
        const text = await readBounded(request, limit);
        let body: unknown;
        try {
          body = parseJsonWithin(text, json);
        } catch (error) {
          if (error instanceof JsonBudgetExceeded) {
            throw refusal(
              'JSON_TOO_COMPLEX',
              `The request body was refused unparsed. ${error.message}`,
              413,
              {
                limit: error.limit,
              },
            );
          }
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
            `${tooLarge} Only ${uploads?.names.join(' or ')} (sent as a query with variables) may be larger.`,
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
