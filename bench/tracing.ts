/**
 * What tracing costs: the same gateway answering the page tree from its response cache (a hit:
 * one request span) and a query that runs Yoga's pipeline (request, operation, parse, validate and
 * execute spans), with tracing off, on for every request, and on for a tenth of them (exporting to
 * a local OTLP receiver), in alternating rounds so that machine noise falls on all three. `npm run bench:tracing [-- --seconds 5] [-- --rounds 3]`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startInProcessGateway } from './lib/in-process-gateway.js';
import { GRAPHQL_HEADERS } from './lib/load.js';
import { PAGE_TREE_BODY } from './lib/queries.js';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' } },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

// A collector that takes every export and keeps nothing.
let exportedBytes = 0;
const receiver = createServer((req, res) => {
  req.on('data', (chunk: Buffer) => {
    exportedBytes += chunk.length;
  });
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const env = { STATUS_CACHE_TTL_MS: '600000', VERIFY_RATE_LIMIT: '1000000' };
const tracingEnv = {
  ...env,
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_BSP_SCHEDULE_DELAY: '1000',
};
const gateways = {
  off: await startInProcessGateway({ env }),
  'on, every request': await startInProcessGateway({ env: tracingEnv }),
  'on, 10% sampled': await startInProcessGateway({
    env: {
      ...tracingEnv,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    },
  }),
};

// `__typename` beside the tree reads no snapshot of its own; `{ __typename }` alone is never
// cached (it reads none), so it always runs the whole pipeline.
const scenarios = {
  'page tree (cache hit)': PAGE_TREE_BODY,
  '{ __typename } (full pipeline)': JSON.stringify({ query: '{ __typename }' }),
};

async function requestsPerSecond(url: string, body: string): Promise<number> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: GRAPHQL_HEADERS,
    body,
    connections: 50,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: failed answers`);
  return result.requests.average;
}

const results: Record<string, Record<string, number[]>> = {};
for (const [name, body] of Object.entries(scenarios)) {
  const runs: Record<string, number[]> = {};
  results[name] = runs;
  // Warm each: the cache, the JIT.
  for (const gateway of Object.values(gateways)) await requestsPerSecond(gateway.url, body);
  for (let round = 0; round < rounds; round += 1) {
    for (const [label, gateway] of Object.entries(gateways)) {
      runs[label] = [...(runs[label] ?? []), await requestsPerSecond(gateway.url, body)];
    }
  }
}

const median = (list: number[] = []) =>
  [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0;
const labels = Object.keys(gateways);
console.log(
  `\n| scenario | ${labels.map((label) => `tracing ${label} req/s`).join(' | ')} | every ÷ off | 10% ÷ off |`,
);
console.log(`| --- | ${labels.map(() => '---').join(' | ')} | --- | --- |`);
for (const [name, runs] of Object.entries(results)) {
  const [off, every, tenth] = labels.map((label) => median(runs[label]));
  console.log(
    `| ${name} | ${[off, every, tenth].map((value) => Math.round(value ?? 0)).join(' | ')} | ${((every ?? 0) / (off ?? 1)).toFixed(2)} | ${((tenth ?? 0) / (off ?? 1)).toFixed(2)} |`,
  );
}
console.log(
  `\nMedian of ${rounds} alternating rounds of ${seconds} s, 50 connections. Exported ${Math.round(exportedBytes / 1024)} KiB of spans.`,
);

for (const gateway of Object.values(gateways)) await gateway.close();
receiver.close();
