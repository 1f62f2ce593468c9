import { AsyncLocalStorage } from 'node:async_hooks';
import type { Span } from '@opentelemetry/api';

/**
 * What the gateway knows about the HTTP request being served, wherever in its handling the code
 * runs: the front door opens the scope, anything caused by the request (a resolver, an upstream
 * call, a cache refresh it started) reads or adds to it, and the request's log line reports it.
 */
export interface RequestScope {
  /** The request's id: in every log line it causes, the `x-request-id` answer header and upstream. */
  readonly requestId: string;
  /** When the request arrived, from `performance.now()`. */
  readonly started: number;
  /** The name of the operation it ran, once known. */
  operation?: string | undefined;
  /** The code of the first error the answer carries (a refusal's, or a GraphQL error's). */
  errorCode?: string | undefined;
  /** Result types of the fields whose outcome is a union worth logging, by response key. */
  results?: Record<string, string> | undefined;
  /**
   * With tracing on, the span that work the request causes is a child of: the HTTP request's,
   * then the step of its operation under way (an upstream call made while executing is the
   * execution's child).
   */
  span?: Span | undefined;
  /** With tracing off, the caller's `traceparent` and `tracestate`, passed on to the upstreams. */
  traceHeaders?: Readonly<Record<string, string>> | undefined;
}

const storage = new AsyncLocalStorage<RequestScope>();

/** Runs `handle` with `scope` as the current request's, through everything it starts. */
export const runInRequestScope = <Result>(scope: RequestScope, handle: () => Result): Result =>
  storage.run(scope, handle);

/** The scope of the request being served, or `undefined` outside one (start-up, timers). */
export const currentRequestScope = (): RequestScope | undefined => storage.getStore();

/** Notes the first error code of the current request's answer, for its log line. */
export function noteErrorCode(code: string): void {
  const scope = storage.getStore();
  if (scope && scope.errorCode === undefined) scope.errorCode = code;
}

/** Notes the result type a field answered (`verifyContract` → `UpstreamUnavailableError`). */
export function noteResult(responseKey: string, typeName: string): void {
  const scope = storage.getStore();
  if (scope) scope.results = { ...scope.results, [responseKey]: typeName };
}
