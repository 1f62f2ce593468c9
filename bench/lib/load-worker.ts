/**
 * The load generator's thread: runs one autocannon load as `runLoad` describes it and inspects
 * every answer, then posts the counts and autocannon's result back. A fresh thread per load gives
 * the client a heap of its own, so that what an earlier load left behind (a Mesh load's answers,
 * say) does not slow the next one's client.
 */
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';
import {
  type AnswerCounts,
  GRAPHQL_HEADERS,
  type GraphqlJson,
  type KindCounts,
  type LoadOptions,
} from './load.js';

const increment = (record: Record<string, number>, key: string, by = 1) => {
  record[key] = (record[key] ?? 0) + by;
};

/** The value at `path`, as a label: `null` met on the way counts as `null`. */
function labelAt(json: GraphqlJson, path: readonly string[]): string | undefined {
  let value: unknown = json;
  for (const key of path) {
    if (value === null) return 'null';
    if (typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value === undefined ? undefined : String(value);
}

const options = workerData as Omit<LoadOptions, 'onTick'>;
const url = new URL(options.url);
const counts: AnswerCounts = {
  byKind: {},
  statusCodes: {},
  errorsByCode: {},
  ok: 0,
  graphqlErrorResponses: 0,
  graphqlErrorResponsesWithData: 0,
  unparseable: 0,
};
// Kinds may repeat in the cycle (to weight the mix): they share their counts and their bodies'
// turn.
const turns = new Map<string, number>();

const requests: autocannon.Request[] = options.requests.map((request) => {
  const kind: KindCounts = counts.byKind[request.kind] ?? {
    responses: 0,
    ok: 0,
    non2xx: 0,
    graphqlErrors: 0,
    labels: {},
  };
  counts.byKind[request.kind] = kind;
  const { body, label } = request;
  const nextBody = (bodies: readonly string[]) => {
    const turn = turns.get(request.kind) ?? 0;
    turns.set(request.kind, turn + 1);
    return bodies[turn % bodies.length] as string;
  };
  return {
    method: 'POST',
    path: url.pathname,
    headers: { ...GRAPHQL_HEADERS },
    ...(typeof body === 'string'
      ? { body }
      : { setupRequest: (built: autocannon.Request) => ({ ...built, body: nextBody(body) }) }),
    onResponse: (status: number, text: string) => {
      kind.responses += 1;
      increment(counts.statusCodes, String(status));
      const success = status >= 200 && status < 300;
      if (!success) kind.non2xx += 1;
      // Parsing every large body would slow the load generator: only those that may carry
      // errors, or whose label is wanted.
      let json: GraphqlJson | undefined;
      if (label || !success || text.includes('"errors"')) {
        try {
          json = JSON.parse(text) as GraphqlJson;
        } catch {
          counts.unparseable += 1;
          return;
        }
      }
      const errors = json?.errors;
      if (Array.isArray(errors) && errors.length > 0) {
        counts.graphqlErrorResponses += 1;
        kind.graphqlErrors += 1;
        if (json?.data) counts.graphqlErrorResponsesWithData += 1;
        for (const error of errors) {
          increment(counts.errorsByCode, error.extensions?.code ?? 'NO_CODE');
        }
      } else if (success) {
        counts.ok += 1;
        kind.ok += 1;
      }
      const value = json && label ? labelAt(json, label) : undefined;
      if (value !== undefined) increment(kind.labels, value);
    },
  };
});

const settings = {
  url: url.origin,
  connections: options.connections,
  // autocannon sees that a load of `amount` answers is over only when it takes a sample: at its
  // default of one a second, each short load of a smoke run would last a second, answered or not.
  ...(options.answers === undefined
    ? { duration: options.durationSeconds }
    : { amount: options.answers, sampleInt: 50 }),
  timeout: options.timeoutSeconds ?? 10,
};
// Off the main thread autocannon leaves its histograms encoded, for the caller to aggregate with
// its `aggregateResult` (documented, missing from its types).
const { aggregateResult } = autocannon as unknown as {
  aggregateResult: (results: unknown[], options: typeof settings) => autocannon.Result;
};
const result = aggregateResult([await autocannon({ ...settings, requests })], settings);
parentPort?.postMessage({
  counts,
  result: {
    duration: result.duration,
    requests: result.requests.total,
    latency: result.latency,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  },
});
