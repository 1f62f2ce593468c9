/**
 * One autocannon scenario against a GraphQL server: a cycle of POST bodies per connection, every
 * answer inspected (status, top-level `errors` with their `extensions.code`, and optionally a
 * label per request kind), summarised, and rendered as markdown. The load runs in a thread of its
 * own (load-worker.ts), a fresh one per load.
 */
import { Worker } from 'node:worker_threads';

/** Headers every GraphQL request carries (production CSRF protection wants the content type). */
export const GRAPHQL_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/graphql-response+json, application/json;q=0.9',
} as const;

export interface LoadRequest {
  /** Label for per-kind counts, e.g. `pageTree`. */
  kind: string;
  /**
   * The JSON request body, or bodies sent in turn: each request of this kind, on whichever
   * connection, takes the next one (varying ids).
   */
  body: string | readonly string[];
  /** Where in the parsed answer a label to count is, e.g. a union's `__typename`. */
  label?: readonly string[];
}

export interface GraphqlJson {
  data?: Record<string, unknown> | null;
  errors?: { message?: string; extensions?: { code?: string } }[];
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  /**
   * Ends the load after this many answers instead of after `durationSeconds` (autocannon's
   * `amount`): for a run that checks that a contender answers, however slowly it answers.
   */
  answers?: number;
  /** Each connection sends these in order, over and over. */
  requests: readonly LoadRequest[];
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

/** What the load generator's thread counted of the answers. */
export interface AnswerCounts {
  byKind: Record<string, KindCounts>;
  statusCodes: Record<string, number>;
  errorsByCode: Record<string, number>;
  ok: number;
  graphqlErrorResponses: number;
  graphqlErrorResponsesWithData: number;
  unparseable: number;
}

/** The part of autocannon's result the thread posts back. */
interface LoadResult {
  duration: number;
  requests: number;
  latency: { p50: number; p90: number; p99: number; max: number; mean: number };
  non2xx: number;
  errors: number;
  timeouts: number;
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

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Runs one bounded load in a fresh thread and inspects every answer. */
export async function runLoad(options: LoadOptions): Promise<LoadSummary> {
  const { onTick, ...load } = options;
  const worker = new Worker(new URL('./load-worker.ts', import.meta.url), { workerData: load });
  const started = performance.now();
  const ticker = onTick
    ? setInterval(() => {
        Promise.resolve(onTick(performance.now() - started)).catch((error: unknown) =>
          console.error('load tick failed:', error),
        );
      }, 1_000)
    : undefined;
  let posted: { counts: AnswerCounts; result: LoadResult };
  try {
    posted = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the load thread exited with ${code}`)));
    });
  } finally {
    if (ticker) clearInterval(ticker);
    await worker.terminate();
  }

  const { counts, result } = posted;
  const connectionErrors = result.errors - result.timeouts;
  return {
    durationSeconds: round(result.duration, 2),
    connections: options.connections,
    requests: result.requests,
    requestsPerSecond: round(result.requests / result.duration, 1),
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: round(result.latency.mean, 2),
    },
    ok: counts.ok,
    non2xx: result.non2xx,
    statusCodes: counts.statusCodes,
    graphqlErrorResponses: counts.graphqlErrorResponses,
    graphqlErrorResponsesWithData: counts.graphqlErrorResponsesWithData,
    errorsByCode: counts.errorsByCode,
    unparseable: counts.unparseable,
    connectionErrors,
    timeouts: result.timeouts,
    byKind: counts.byKind,
    errors:
      Object.values(counts.byKind).reduce((sum, kind) => sum + kind.responses, 0) -
      counts.ok +
      result.errors,
  };
}

/**
 * What makes a load's figures wrong to report: no answer that counts (0 req/s of good answers: the
 * contender answered nothing, or only failures), and, unless `errorsAreData`, any failure at all.
 */
export function loadFaults(
  load: LoadSummary,
  { errorsAreData = false }: { errorsAreData?: boolean } = {},
): string[] {
  const faults: string[] = [];
  if (load.ok === 0) {
    faults.push(`answered nothing (${load.ok} good answers of ${load.requests} requests)`);
  }
  if (load.errors > 0 && !errorsAreData) {
    faults.push(
      `${load.errors} errors (status ${formatCounts(load.statusCodes)}; codes ` +
        `${formatCounts(load.errorsByCode)}; ${load.connectionErrors} connection errors, ` +
        `${load.timeouts} timeouts, ${load.unparseable} unparseable)`,
    );
  }
  return faults;
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
