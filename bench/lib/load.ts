/**
 * One autocannon scenario against a GraphQL server: a cycle of POST bodies per connection, every
 * answer inspected (status, top-level `errors` with their `extensions.code`, and optionally a
 * `__typename` per request kind), summarised, and rendered as markdown.
 */
import autocannon from 'autocannon';
import { GRAPHQL_HEADERS } from './processes.js';

export interface LoadRequest {
  /** Label for per-kind counts, e.g. `pageTree`. */
  kind: string;
  /** The JSON request body; a function builds a fresh one per request (varying ids). */
  body: string | (() => string);
  /** Reads a label from the parsed answer (e.g. a union's `__typename`) to count. */
  label?: (json: GraphqlJson) => string | undefined;
}

export interface GraphqlJson {
  data?: Record<string, unknown> | null;
  errors?: { message?: string; extensions?: { code?: string } }[];
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  /** Each connection sends these in order, over and over. */
  requests: LoadRequest[];
  /** Per-request timeout (autocannon's); default 10 s. */
  timeoutSeconds?: number;
  /** Called about once a second while the load runs (RSS sampling, fault toggling). */
  onTick?: (elapsedMs: number) => void | Promise<void>;
}

export interface KindCounts {
  responses: number;
  ok: number;
  non2xx: number;
  graphqlErrors: number;
  labels: Record<string, number>;
}

export interface LoadSummary {
  durationSeconds: number;
  connections: number;
  /** Completed responses. */
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** 2xx without top-level `errors`. */
  ok: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** Responses with a top-level `errors` array (whatever their status). */
  graphqlErrorResponses: number;
  /** Of those, how many still carried data. */
  graphqlErrorResponsesWithData: number;
  /** Errors by `extensions.code` (`NO_CODE` without one). */
  errorsByCode: Record<string, number>;
  /** Bodies that were not JSON. */
  unparseable: number;
  /** Connection errors and timeouts, as autocannon counts them. */
  connectionErrors: number;
  timeouts: number;
  byKind: Record<string, KindCounts>;
  /**
   * Every failure added up, each counted once: answers that were not 2xx-without-`errors` (non-2xx,
   * GraphQL errors, unparseable bodies), plus connection errors and timeouts.
   */
  errors: number;
}

const increment = (record: Record<string, number>, key: string, by = 1) => {
  record[key] = (record[key] ?? 0) + by;
};

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Runs one bounded load and inspects every answer. */
export async function runLoad(options: LoadOptions): Promise<LoadSummary> {
  const url = new URL(options.url);
  const byKind: Record<string, KindCounts> = {};
  const statusCodes: Record<string, number> = {};
  const errorsByCode: Record<string, number> = {};
  let ok = 0;
  let graphqlErrorResponses = 0;
  let graphqlErrorResponsesWithData = 0;
  let unparseable = 0;

  const requests: autocannon.Request[] = options.requests.map((request) => {
    // Kinds may repeat in the cycle (to weight the mix): they share their counts.
    const counts: KindCounts = byKind[request.kind] ?? {
      responses: 0,
      ok: 0,
      non2xx: 0,
      graphqlErrors: 0,
      labels: {},
    };
    byKind[request.kind] = counts;
    const { body, label } = request;
    return {
      method: 'POST',
      path: url.pathname,
      headers: { ...GRAPHQL_HEADERS },
      ...(typeof body === 'string'
        ? { body }
        : { setupRequest: (built: autocannon.Request) => ({ ...built, body: body() }) }),
      onResponse: (status: number, text: string) => {
        counts.responses += 1;
        increment(statusCodes, String(status));
        const success = status >= 200 && status < 300;
        if (!success) counts.non2xx += 1;
        // Parsing every large body would slow the load generator: only those that may carry
        // errors, or whose label is wanted.
        let json: GraphqlJson | undefined;
        if (label || !success || text.includes('"errors"')) {
          try {
            json = JSON.parse(text) as GraphqlJson;
          } catch {
            unparseable += 1;
            return;
          }
        }
        const errors = json?.errors;
        if (Array.isArray(errors) && errors.length > 0) {
          graphqlErrorResponses += 1;
          counts.graphqlErrors += 1;
          if (json?.data) graphqlErrorResponsesWithData += 1;
          for (const error of errors) increment(errorsByCode, error.extensions?.code ?? 'NO_CODE');
        } else if (success) {
          ok += 1;
          counts.ok += 1;
        }
        const value = json && label ? label(json) : undefined;
        if (value !== undefined) increment(counts.labels, value);
      },
    };
  });

  // The load generator runs in this process: what earlier loads left on its heap (a Mesh load's
  // answers, say) is collected first, so that it does not slow this load's client.
  (globalThis as { gc?: () => void }).gc?.();
  const instance = autocannon({
    url: url.origin,
    connections: options.connections,
    duration: options.durationSeconds,
    timeout: options.timeoutSeconds ?? 10,
    requests,
  });
  const started = performance.now();
  const ticker = options.onTick
    ? setInterval(() => {
        Promise.resolve(options.onTick?.(performance.now() - started)).catch((error: unknown) =>
          console.error('load tick failed:', error),
        );
      }, 1_000)
    : undefined;
  let result: autocannon.Result;
  try {
    result = await instance;
  } finally {
    if (ticker) clearInterval(ticker);
  }

  const non2xx = result.non2xx;
  const connectionErrors = result.errors - result.timeouts;
  return {
    durationSeconds: round(result.duration, 2),
    connections: options.connections,
    requests: result.requests.total,
    requestsPerSecond: round(result.requests.total / result.duration, 1),
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: round(result.latency.mean, 2),
    },
    ok,
    non2xx,
    statusCodes,
    graphqlErrorResponses,
    graphqlErrorResponsesWithData,
    errorsByCode,
    unparseable,
    connectionErrors,
    timeouts: result.timeouts,
    byKind,
    errors:
      Object.values(byKind).reduce((sum, kind) => sum + kind.responses, 0) - ok + result.errors,
  };
}

// ---------------------------------------------------------------------------------------------
// Rendering

export type Cell = string | number | null | undefined;

/** A markdown table; numbers get thousands separators, null/undefined become `n/a`. */
export function markdownTable(headers: string[], rows: Cell[][]): string {
  const format = (cell: Cell) =>
    cell === null || cell === undefined
      ? 'n/a'
      : typeof cell === 'number'
        ? cell.toLocaleString('en-US', { maximumFractionDigits: 2 })
        : cell;
  const lines = [
    `| ${headers.join(' | ')} |`,
    `| ${headers.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(format).join(' | ')} |`),
  ];
  return lines.join('\n');
}

/** `a: 3, b: 1`, largest first; `-` when empty. */
export function formatCounts(record: Record<string, number> | undefined): string {
  const entries = Object.entries(record ?? {}).sort(([, a], [, b]) => b - a);
  return entries.length === 0 ? '-' : entries.map(([key, n]) => `${key}: ${n}`).join(', ');
}

/** `<dir>/<prefix>-2026-11-22T20-15-00Z.json`-style timestamp. */
export function timestamp(date = new Date()): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replaceAll(':', '-');
}
