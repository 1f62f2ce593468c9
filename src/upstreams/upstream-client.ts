import ky, { HTTPError, type KyInstance, TimeoutError } from 'ky';
import type { Logger } from 'pino';
import type { z } from 'zod';
import {
  UpstreamBadResponseError,
  type UpstreamEndpoint,
  UpstreamUnavailableError,
} from './errors.js';
import { BodyTimeoutError, BodyTooLargeError, readBodyText } from './read-body-text.js';

export interface UpstreamClientOptions {
  /** Name of the upstream in errors and logs, e.g. `status feed`. */
  readonly name: string;
  /** Base URL without a trailing slash; request paths are appended to it. */
  readonly baseUrl: string;
  /**
   * Time allowed for each attempt to get a response, and again for reading its body.
   * @default 5000
   */
  readonly timeoutMs?: number;
  /**
   * Retries of a GET after a network error or a 5xx answer, with exponential backoff.
   * Other methods are never retried.
   * @default 2
   */
  readonly retries?: number;
  /**
   * Delay before the first retry; each further retry doubles it, capped at 2 s.
   * @default 300
   */
  readonly retryDelayMs?: number;
  /**
   * Largest response body accepted; a larger one is an `UpstreamBadResponseError`.
   * @default 10 MiB
   */
  readonly maxBodyBytes?: number;
  readonly logger?: Logger;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

export interface UpstreamClient {
  /** GET `path`, parse the body as JSON and validate it with `schema`. */
  getJson<Output>(path: string, schema: z.ZodType<Output>): Promise<Output>;
}

const RETRIED_STATUS_CODES = [500, 502, 503, 504];

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const {
    name,
    baseUrl,
    timeoutMs = 5_000,
    retries = 2,
    retryDelayMs = 300,
    maxBodyBytes = 10 * 1024 * 1024,
    logger,
  } = options;

  const http: KyInstance = ky.create({
    prefixUrl: baseUrl,
    timeout: timeoutMs,
    throwHttpErrors: true,
    headers: { accept: 'application/json' },
    retry: {
      limit: retries,
      methods: ['get'],
      statusCodes: RETRIED_STATUS_CODES,
      afterStatusCodes: [],
      delay: (attempt) => retryDelayMs * 2 ** (attempt - 1),
      backoffLimit: 2_000,
    },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  async function getJson<Output>(path: string, schema: z.ZodType<Output>): Promise<Output> {
    const endpoint: UpstreamEndpoint = { upstream: name, method: 'GET', path };
    const started = performance.now();
    try {
      const response = await send(endpoint, () => http.get(path.replace(/^\//, '')));
      const text = await readBodyText(response, { maxBytes: maxBodyBytes, timeoutMs }).catch(
        (error: unknown) => {
          throw toUpstreamError(endpoint, error, timeoutMs);
        },
      );
      const value = parseJson(endpoint, text, response.headers.get('content-type'));
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        throw new UpstreamBadResponseError(
          endpoint,
          `it does not have the expected shape (${summarizeIssues(parsed.error)})`,
        );
      }
      logger?.debug(
        { upstream: name, path, status: response.status, ms: elapsed(started) },
        'upstream request',
      );
      return parsed.data;
    } catch (error) {
      logger?.warn(
        { upstream: name, path, ms: elapsed(started), err: error },
        'upstream request failed',
      );
      throw error;
    }
  }

  async function send(endpoint: UpstreamEndpoint, request: () => Promise<Response>) {
    try {
      return await request();
    } catch (error) {
      throw toUpstreamError(endpoint, error, timeoutMs);
    }
  }

  return { getJson };
}

function toUpstreamError(endpoint: UpstreamEndpoint, error: unknown, timeoutMs: number) {
  if (error instanceof UpstreamBadResponseError || error instanceof UpstreamUnavailableError) {
    return error;
  }
  if (error instanceof HTTPError) {
    return new UpstreamUnavailableError(endpoint, `it answered HTTP ${error.response.status}`, {
      status: error.response.status,
      cause: error,
    });
  }
  if (error instanceof TimeoutError) {
    return new UpstreamUnavailableError(endpoint, `no answer within ${timeoutMs} ms`, {
      cause: error,
    });
  }
  if (error instanceof BodyTimeoutError) {
    return new UpstreamUnavailableError(endpoint, error.message, { cause: error });
  }
  if (error instanceof BodyTooLargeError) {
    return new UpstreamBadResponseError(endpoint, error.message, { cause: error });
  }
  return new UpstreamUnavailableError(endpoint, 'the connection failed', { cause: error });
}

function parseJson(endpoint: UpstreamEndpoint, text: string, contentType: string | null): unknown {
  if (text.trim() === '') {
    throw new UpstreamBadResponseError(endpoint, 'the body is empty');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    const kind = contentType ? `a ${contentType.split(';')[0]} body` : 'a body';
    throw new UpstreamBadResponseError(endpoint, `${kind} that is not valid JSON`, {
      cause: error,
    });
  }
}

function summarizeIssues(error: z.ZodError): string {
  const shown = error.issues.slice(0, 3).map((issue) => {
    const at = issue.path.length > 0 ? issue.path.join('.') : 'the root';
    return `${at}: ${issue.message}`;
  });
  const more = error.issues.length - shown.length;
  return more > 0 ? `${shown.join('; ')}; and ${more} more` : shown.join('; ');
}

const elapsed = (started: number) => Math.round(performance.now() - started);
