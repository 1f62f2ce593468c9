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
   * Other methods are never retried: they may not be idempotent.
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

/** An upstream's answer, whatever its status, with the body read in full. */
export interface UpstreamResponse {
  readonly endpoint: UpstreamEndpoint;
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export interface UpstreamClient {
  /**
   * GET `path`, parse the body as JSON and validate it with `schema`. A non-2xx answer is an
   * `UpstreamUnavailableError`; a body of the wrong shape an `UpstreamBadResponseError`.
   */
  getJson<Output>(path: string, schema: z.ZodType<Output>): Promise<Output>;
  /**
   * POST `json` to `path` once. Any HTTP status resolves, for the caller to interpret; only a
   * failure to get a whole answer rejects (`UpstreamUnavailableError`). Neither the request body
   * nor the headers are ever logged: they may carry secrets.
   */
  postJson(
    path: string,
    json: unknown,
    options?: { headers?: Record<string, string> },
  ): Promise<UpstreamResponse>;
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

  /** Sends one request (with ky's retries), reads the whole body, and logs the outcome once. */
  async function exchange(
    endpoint: UpstreamEndpoint,
    request: () => Promise<Response>,
  ): Promise<UpstreamResponse> {
    const started = performance.now();
    try {
      const response = await request();
      const text = await readBodyText(response, { maxBytes: maxBodyBytes, timeoutMs });
      logger?.debug(
        { upstream: name, path: endpoint.path, status: response.status, ms: elapsed(started) },
        'upstream request',
      );
      return { endpoint, status: response.status, headers: response.headers, text };
    } catch (error) {
      const failure = toUpstreamError(endpoint, error, timeoutMs);
      logger?.warn(
        { upstream: name, path: endpoint.path, ms: elapsed(started), err: failure },
        'upstream request failed',
      );
      throw failure;
    }
  }

  return {
    async getJson(path, schema) {
      const endpoint: UpstreamEndpoint = { upstream: name, method: 'GET', path };
      const response = await exchange(endpoint, () => http.get(relative(path)));
      try {
        return parseJsonBody(response, schema);
      } catch (error) {
        logger?.warn({ upstream: name, path, err: error }, 'upstream request failed');
        throw error;
      }
    },
    postJson(path, json, { headers } = {}) {
      const endpoint: UpstreamEndpoint = { upstream: name, method: 'POST', path };
      return exchange(endpoint, () =>
        http.post(relative(path), {
          json,
          throwHttpErrors: false,
          retry: 0,
          ...(headers ? { headers } : {}),
        }),
      );
    },
  };
}

/** Parses an upstream's body as JSON of the shape `schema` describes. */
export function parseJsonBody<Output>(
  response: UpstreamResponse,
  schema: z.ZodType<Output>,
): Output {
  const { endpoint, text } = response;
  if (text.trim() === '') {
    throw new UpstreamBadResponseError(endpoint, 'the body is empty');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const contentType = response.headers.get('content-type');
    const kind = contentType ? `a ${contentType.split(';')[0]} body` : 'a body';
    throw new UpstreamBadResponseError(endpoint, `${kind} that is not valid JSON`, {
      cause: error,
    });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new UpstreamBadResponseError(
      endpoint,
      `it does not have the expected shape (${summarizeIssues(parsed.error)})`,
    );
  }
  return parsed.data;
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

function summarizeIssues(error: z.ZodError): string {
  const shown = error.issues.slice(0, 3).map((issue) => {
    const at = issue.path.length > 0 ? issue.path.join('.') : 'the root';
    return `${at}: ${issue.message}`;
  });
  const more = error.issues.length - shown.length;
  return more > 0 ? `${shown.join('; ')}; and ${more} more` : shown.join('; ');
}

const relative = (path: string) => path.replace(/^\//, '');
const elapsed = (started: number) => Math.round(performance.now() - started);
