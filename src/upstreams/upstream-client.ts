import ky, { HTTPError, type KyInstance, type Options as KyOptions, TimeoutError } from 'ky';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { UpstreamPolicy } from '../config.js';
import { UpstreamBadResponseError } from '../errors/upstream-bad-response-error.js';
import { type UpstreamEndpoint, UpstreamError } from '../errors/upstream-error.js';
import { UpstreamUnavailableError } from '../errors/upstream-unavailable-error.js';
import { currentRequestScope } from '../observability/request-scope.js';
import { endpointTemplate } from '../observability/route.js';
import { failSpan, type Span, type Tracing } from '../observability/tracing.js';
import { BodyTimeoutError, BodyTooLargeError, readBodyText } from '../read-body-text.js';
import { CircuitBreaker, type CircuitState } from './circuit-breaker.js';
import { RequestSlots } from './request-slots.js';
import {
  conditionalHeaders,
  UNCHANGED,
  type Unchanged,
  type Validators,
  validatorsOf,
} from './validators.js';

/** Told of every upstream request and circuit change, for metrics. */
export interface UpstreamObserver {
  /** `outcome` is the HTTP status, `error` when no whole answer came, `rejected` when the circuit was open. */
  request(
    endpoint: UpstreamEndpoint,
    outcome: number | 'error' | 'rejected',
    seconds: number,
  ): void;
  circuit(upstream: string, state: CircuitState): void;
}

export interface UpstreamClientOptions extends UpstreamPolicy {
  /** Name of the upstream in errors, logs and metrics, e.g. `status feed`. */
  readonly name: string;
  /** Base URL without a trailing slash; request paths are appended to it. */
  readonly baseUrl: string;
  readonly logger: Logger;
  readonly observer?: UpstreamObserver;
  /**
   * Traces each request as a client span under the current request's, and sends its
   * `traceparent`. Without it, the caller's own `traceparent` is passed on as it came.
   */
  readonly tracing?: Tracing | undefined;
  /**
   * Whether an error answer shows the upstream itself failing: only such answers count toward the
   * circuit breaker and are retried (GETs). An upstream that relays a third party's failure in its
   * own error body is working, and asking it again at once would change nothing. Without it, a
   * 5xx counts, and so does any error status `getJson` rejects.
   */
  readonly isServiceFailure?: (response: Pick<UpstreamResponse, 'status' | 'text'>) => boolean;
  /**
   * The circuit this client's requests go through, when it outlives the client (a status page's,
   * kept while the page's client is released and made again).
   * @default a circuit of its own (`upstreamCircuit`), its changes told to `observer`
   */
  readonly circuit?: CircuitBreaker;
  /**
   * The request slots this client's requests take, when it shares them with other clients (the
   * status pages of one host share one set).
   * @default `maxConcurrentRequests` slots of its own
   */
  readonly slots?: RequestSlots;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/** Largest upstream body accepted; a larger one is an `UpstreamBadResponseError`. */
const MAX_UPSTREAM_BODY_BYTES = 10 * 1024 * 1024;

/** An upstream's answer, whatever its status, with the body read in full. */
export interface UpstreamResponse {
  readonly endpoint: UpstreamEndpoint;
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export interface RequestOptions {
  /** Sent as `x-request-id`, so the upstream's logs can be matched with the gateway's. */
  readonly requestId?: string | undefined;
  /**
   * The largest body accepted for this request, below the client's 10 MiB: a larger one is an
   * `UpstreamBadResponseError`, refused as it arrives.
   * @default 10 MiB
   */
  readonly maxBytes?: number | undefined;
  readonly headers?: Record<string, string>;
  /** Appended to the path as its query; error messages and metrics name the path without it. */
  readonly searchParams?: Record<string, string>;
}

/** A document `getSizedJson` read: its value, its length and its validators. */
export interface SizedJson<Output> {
  readonly value: Output;
  /** The body's length, in UTF-16 units (bytes for ASCII). */
  readonly bytes: number;
  /** What identifies this version of the document, when the upstream said (`ETag`, `Last-Modified`). */
  readonly validators: Validators | undefined;
}

export type UpstreamClient = ReturnType<typeof createUpstreamClient>;

const RETRIED_STATUS_CODES = [500, 502, 503, 504];

/**
 * A circuit breaker with an upstream's policy (`CIRCUIT_*`), each change of state logged and told
 * to `onChange`.
 */
export function upstreamCircuit(
  options: Pick<
    UpstreamClientOptions,
    'name' | 'logger' | 'circuitFailureThreshold' | 'circuitCooldownMs'
  >,
  onChange?: (state: CircuitState) => void,
): CircuitBreaker {
  const { name, logger } = options;
  return new CircuitBreaker({
    failureThreshold: options.circuitFailureThreshold,
    cooldownMs: options.circuitCooldownMs,
    onStateChange: (state) => {
      onChange?.(state);
      const log = state === 'open' ? logger.warn : logger.info;
      log.call(logger, { upstream: name, circuit: state }, `upstream circuit ${state}`);
    },
  });
}

export function createUpstreamClient(options: UpstreamClientOptions) {
  const { name, baseUrl, timeoutMs, retries, retryDelayMs, logger, observer } = options;
  const { isServiceFailure, tracing } = options;
  const slots = options.slots ?? new RequestSlots(options.maxConcurrentRequests);
  // Spans name the upstream by origin and path: never the credentials a base URL may carry.
  const { origin, hostname, port, pathname: basePath } = new URL(baseUrl);
  const serverPort = Number(port) || (origin.startsWith('https:') ? 443 : 80);

  /**
   * Whether `error` is an error status that `isServiceFailure` says is the upstream answering in
   * its own words (a 404 for a missing chain list): the upstream working, not to be retried.
   */
  const isOwnAnswer = (error: unknown) =>
    isServiceFailure !== undefined &&
    error instanceof HTTPError &&
    !isServiceFailure({ status: error.response.status, text: dataText(error.data) });

  const http: KyInstance = ky.create({
    prefix: baseUrl,
    timeout: timeoutMs,
    headers: { accept: 'application/json' },
    // A redirect is never followed: it could carry what was sent (an apiKey in a POST) to another
    // address. `exchange` answers it as the upstream being unavailable.
    redirect: 'manual',
    retry: {
      limit: retries,
      methods: ['get'],
      statusCodes: RETRIED_STATUS_CODES,
      afterStatusCodes: [],
      delay: (attempt) => retryDelayMs * 2 ** (attempt - 1),
      backoffLimit: 2_000,
      // An error status is retried only when it shows the upstream failing (ky's rules then).
      shouldRetry: ({ error }) => (isOwnAnswer(error) ? false : undefined),
    },
    fetch: options.fetch,
  });

  const circuit =
    options.circuit ?? upstreamCircuit(options, (state) => observer?.circuit(name, state));

  /**
   * Sends one request (with ky's retries) through the circuit and reads the whole body. `request`
   * gets the ky options (headers, query) of the caller's; `judge` turns the answer into the result
   * (throwing when it is unusable, which counts as a failure); `isServiceFailure` decides whether
   * a whole answer counts as the upstream failing. The outcome is logged once.
   */
  async function exchange<Result>(
    method: 'GET' | 'POST',
    path: string,
    { requestId, headers, searchParams, maxBytes = MAX_UPSTREAM_BODY_BYTES }: RequestOptions,
    request: (init: KyOptions) => Promise<Response>,
    judge: (response: UpstreamResponse) => Result,
  ): Promise<Result> {
    const endpoint: UpstreamEndpoint = { upstream: name, method, path };
    const span = tracing?.upstreamSpan(`${method} ${endpointTemplate(path)}`, {
      'http.request.method': method,
      'url.full': `${origin}${basePath.replace(/\/$/, '')}${path}`,
      'server.address': hostname,
      'server.port': serverPort,
      'gateway.upstream': name,
    });
    const traceHeaders = span ? tracing?.headersFor(span) : currentRequestScope()?.traceHeaders;
    let status: number | 'error' | 'rejected' = 'rejected';
    let failure: string | undefined;
    const started = performance.now();
    try {
      return await admitted(endpoint, async () => {
        status = 'error';
        try {
          const response = await request({
            headers: {
              ...headers,
              ...traceHeaders,
              ...(requestId && { 'x-request-id': requestId }),
            },
            ...(searchParams && { searchParams }),
          });
          status = response.status;
          if (isRedirect(response.status)) {
            await response.body?.cancel();
            throw redirectRefused(endpoint, response.status);
          }
          const text = await readBodyText(response, {
            maxBytes: Math.min(maxBytes, MAX_UPSTREAM_BODY_BYTES),
            timeoutMs,
          });
          const answer = { endpoint, status: response.status, headers: response.headers, text };
          const result = judge(answer);
          if (isServiceFailure ? isServiceFailure(answer) : answer.status >= 500) circuit.failed();
          else circuit.succeeded();
          logger.debug(
            { upstream: name, path, status: response.status, ms: elapsed(started) },
            'upstream request',
          );
          return result;
        } catch (error) {
          // No answer, a timeout or an unusable body is the upstream failing.
          if (isOwnAnswer(error)) circuit.succeeded();
          else circuit.failed();
          if (error instanceof HTTPError) status = error.response.status;
          const failure = toUpstreamError(endpoint, error, timeoutMs);
          logger.warn(
            { upstream: name, path, ms: elapsed(started), err: failure },
            'upstream request failed',
          );
          throw failure;
        }
      });
    } catch (error) {
      failure = error instanceof Error ? error.message : 'the request failed';
      throw error;
    } finally {
      observer?.request(
        endpoint,
        status,
        status === 'rejected' ? 0 : (performance.now() - started) / 1000,
      );
      if (span) endUpstreamSpan(span, status, failure);
    }
  }

  /**
   * Runs `send` once the circuit admits the request and a request slot is free; rejects at once
   * with an `UpstreamUnavailableError` saying which of the two refused it.
   */
  async function admitted<Result>(
    endpoint: UpstreamEndpoint,
    send: () => Promise<Result>,
  ): Promise<Result> {
    if (!circuit.admit()) {
      const seconds = Math.ceil(circuit.retryInMs / 1000);
      throw new UpstreamUnavailableError(
        endpoint,
        `it failed repeatedly; the gateway waits ${seconds} s before asking again`,
      );
    }
    if (!(await slots.acquire(timeoutMs))) {
      throw new UpstreamUnavailableError(
        endpoint,
        `${slots.size} requests to ${options.slots ? 'its host' : 'it'} are already in flight; try again shortly`,
      );
    }
    try {
      return await send();
    } finally {
      slots.release();
    }
  }

  return {
    /**
     * GET `path`, parse the body as JSON and validate it with `schema`. A non-2xx answer is an
     * `UpstreamUnavailableError`; a body of the wrong shape an `UpstreamBadResponseError`.
     */
    getJson<Output>(path: string, schema: z.ZodType<Output>, options: RequestOptions = {}) {
      return exchange(
        'GET',
        path,
        options,
        (init) => http.get(path, init),
        (response) => parseJsonBody(response, schema),
      );
    },
    /**
     * `getJson`, with the length of the body it parsed (UTF-16 units, bytes for ASCII): what the
     * status pages' memory budget estimates a snapshot from; and the answer's validators, for the
     * next request of the document. With `validators` (those of the document on hand), the request
     * is conditional: `UNCHANGED` when the upstream answers `304 Not Modified`. A 304 to a request
     * that named no version is an `UpstreamBadResponseError`: there is nothing it could confirm.
     */
    getSizedJson<Output>(
      path: string,
      schema: z.ZodType<Output>,
      { validators, ...options }: RequestOptions & { readonly validators?: Validators } = {},
    ): Promise<SizedJson<Output> | Unchanged> {
      const conditional = conditionalHeaders(validators);
      const asked = Object.keys(conditional).length > 0;
      return exchange(
        'GET',
        path,
        { ...options, headers: { ...options.headers, ...conditional } },
        // A 304 is an answer to read, not an error to throw.
        (init) => http.get(path, { ...init, throwHttpErrors: (status) => status !== 304 }),
        (response) => {
          if (response.status === 304) {
            if (asked) return UNCHANGED;
            throw new UpstreamBadResponseError(
              response.endpoint,
              '304 Not Modified, to a request that named no version of the document',
            );
          }
          return {
            value: parseJsonBody(response, schema),
            bytes: response.text.length,
            validators: validatorsOf(response.headers, Date.now()),
          };
        },
      );
    },
    /**
     * GET `path` (retried like `getJson`) and resolve with the answer whatever its status, for
     * endpoints whose 4xx answers mean something (a 404 for "not verified").
     */
    get(path: string, options: RequestOptions = {}) {
      return exchange(
        'GET',
        path,
        options,
        (init) =>
          http.get(path, init).catch((error: unknown) => {
            // ky has retried what it retries; the final answer is the caller's to read. ky 2 has
            // consumed its body into `data` by then, so the answer is rebuilt from that.
            if (error instanceof HTTPError) return rebuiltResponse(error);
            throw error;
          }),
        (response) => response,
      );
    },
    /**
     * POST `json` to `path` once. Any HTTP status resolves, for the caller to interpret; only a
     * failure to get a whole answer rejects (`UpstreamUnavailableError`). Neither the request body
     * nor the headers are ever logged: they may carry secrets.
     */
    postJson(path: string, json: unknown, options: RequestOptions = {}) {
      return exchange(
        'POST',
        path,
        options,
        (init) => http.post(path, { ...init, json, throwHttpErrors: false, retry: 0 }),
        (response) => response,
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

/**
 * The error callers see. What failed is not kept as its cause, only what it said (`saidBy`): ky's
 * `HTTPError` and `TimeoutError` hold the request, the answer and ky's options, fetch's failure
 * its connection's, and a snapshot cache keeps a document's last failure (16 KB each, 1 KB
 * without them: `bench/page-memory.ts`).
 */
function toUpstreamError(endpoint: UpstreamEndpoint, error: unknown, timeoutMs: number) {
  if (error instanceof UpstreamError) return error;
  if (error instanceof HTTPError) {
    const { status } = error.response;
    if (isRedirect(status)) return redirectRefused(endpoint, status);
    return new UpstreamUnavailableError(endpoint, `it answered HTTP ${status}`, { status });
  }
  if (error instanceof TimeoutError) {
    return new UpstreamUnavailableError(endpoint, `no answer within ${timeoutMs} ms`);
  }
  if (error instanceof BodyTimeoutError) {
    return new UpstreamUnavailableError(endpoint, error.message, { cause: error });
  }
  if (error instanceof BodyTooLargeError) {
    return new UpstreamBadResponseError(endpoint, error.message, { cause: error });
  }
  return new UpstreamUnavailableError(endpoint, 'the connection failed', {
    cause: saidBy(error),
  });
}

/** An error of the messages of `error` and its causes (ECONNREFUSED and the like), nothing else. */
function saidBy(error: unknown): Error {
  const said: string[] = [];
  for (let cause = error; cause instanceof Error && said.length < 4; cause = cause.cause) {
    said.push(cause.message);
  }
  return new Error(said.length > 0 ? said.join(': ') : String(error));
}

function summarizeIssues(error: z.ZodError): string {
  const shown = error.issues.slice(0, 3).map((issue) => {
    const at = issue.path.length > 0 ? issue.path.join('.') : 'the root';
    return `${at}: ${issue.message}`;
  });
  const more = error.issues.length - shown.length;
  return more > 0 ? `${shown.join('; ')}; and ${more} more` : shown.join('; ');
}

/** A 304 is not a redirect: it answers a conditional request (`If-None-Match`) the caller made. */
const isRedirect = (status: number) => status >= 300 && status < 400 && status !== 304;

const redirectRefused = (endpoint: UpstreamEndpoint, status: number) =>
  new UpstreamUnavailableError(
    endpoint,
    `it answered a redirect (HTTP ${status}); the gateway follows none, so that nothing it sends reaches another address`,
    { status },
  );

/** An HTTP error's answer as a Response again, with the body ky read into `data`. */
function rebuiltResponse({ response, data }: HTTPError): Response {
  // A 304 (or 204) has no body, and a Response refuses one for it.
  const bodiless = response.status === 304 || response.status === 204;
  return new Response(data === undefined || bodiless ? null : dataText(data), {
    status: response.status,
    headers: response.headers,
  });
}

/** The body ky read into an `HTTPError`'s `data` (parsed when it was JSON), as text. */
function dataText(data: unknown): string {
  if (data === undefined) return '';
  return typeof data === 'string' ? data : JSON.stringify(data);
}

/**
 * Ends an upstream call's span with its outcome: `failure` is the message of the error the call
 * threw; an error status fails it too, as HTTP client spans count it, even when the caller reads
 * the answer (a rejected verification is a 4xx).
 */
function endUpstreamSpan(
  span: Span,
  status: number | 'error' | 'rejected',
  failure: string | undefined,
): void {
  if (typeof status === 'number') span.setAttribute('http.response.status_code', status);
  if (failure !== undefined) failSpan(span, failure);
  else if (typeof status === 'number' && status >= 400) failSpan(span, `HTTP ${status}`);
  span.end();
}

const elapsed = (started: number) => Math.round(performance.now() - started);
