/**
 * Cold and warm latency of the page-tree query over a real port, and the upstream requests it
 * costs. `npm run bench:latency [-- --preset realistic] [-- --runs 500]`.
 */

import { parseArgs } from 'node:util';
import {
  createSimulatedFeed,
  STATUS_FEED_PRESETS,
  type StatusFeedPreset,
} from '../simulator/src/status-feed/fixture.js';
import { PAGE_TREE_QUERY } from '../src/http/page-tree-query.js';
import { startInProcessGateway } from './lib/in-process-gateway.js';

const { values } = parseArgs({
  options: {
    preset: { type: 'string', default: 'demo' },
    runs: { type: 'string', default: '300' },
  },
});
const preset = values.preset as StatusFeedPreset;
if (!(preset in STATUS_FEED_PRESETS)) {
  console.error(`--preset must be one of ${Object.keys(STATUS_FEED_PRESETS).join(', ')}`);
  process.exit(1);
}
const runs = Number(values.runs);

const running = await startInProcessGateway({
  env: { STATUS_CACHE_TTL_MS: '60000' },
  simulator: { statusFeed: createSimulatedFeed(STATUS_FEED_PRESETS[preset]) },
});
const { simulator, url } = running;

async function pageTree(): Promise<{ ms: number; bytes: number }> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: PAGE_TREE_QUERY }),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200 || text.includes('"errors"')) throw new Error(`failed: ${text}`);
  return { ms, bytes: text.length };
}

const cold = await pageTree();
const coldUpstream = simulator.requestCount();
simulator.resetRequests();
const warm: number[] = [];
for (let i = 0; i < runs; i += 1) warm.push((await pageTree()).ms);
warm.sort((a, b) => a - b);
const at = (q: number) =>
  (warm[Math.min(warm.length - 1, Math.floor(q * warm.length))] ?? 0).toFixed(2);

console.log(
  `| preset | response bytes | cold ms | cold upstream requests | warm p50 ms | warm p99 ms | warm upstream requests / ${runs} ops |`,
);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
console.log(
  `| ${preset} | ${cold.bytes} | ${cold.ms.toFixed(2)} | ${coldUpstream} | ${at(0.5)} | ${at(0.99)} | ${simulator.requestCount()} |`,
);

await running.close();
