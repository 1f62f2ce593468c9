/**
 * What the response cache keeps alive: the red team's replay. On the large feed (500 components)
 * with a 50 ms TTL, 1,000 distinct page-tree queries are each answered and kept while the feed is
 * refetched under them; the heap after a full collection shows whether old snapshots stay
 * reachable through the cached answers (586 MiB before entries held them weakly).
 * `npm run bench:memory`.
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createSimulatedFeed, STATUS_FEED_PRESETS } from '../simulator/src/status-feed/fixture.js';
import { PAGE_TREE_QUERY } from '../src/http/page-tree-query.js';
import { startInProcessGateway } from './lib/in-process-gateway.js';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const heapMiB = () => {
  collect();
  return Math.round(process.memoryUsage().heapUsed / 1_048_576);
};

// Refetches still running when the simulator stops would log failures that mean nothing here.
const running = await startInProcessGateway({
  env: { NODE_ENV: 'production', STATUS_CACHE_TTL_MS: '50' },
  simulator: { statusFeed: createSimulatedFeed(STATUS_FEED_PRESETS.large) },
  logLevel: 'error',
});
const { simulator, url } = running;

const before = heapMiB();
let bytes = 0;
for (let i = 0; i < 1_000; i += 1) {
  // Distinct bodies: each answer is a cache entry of its own.
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: `${PAGE_TREE_QUERY}\n# ${i}` }),
  });
  bytes += (await response.arrayBuffer()).byteLength;
  if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 60));
}
const after = heapMiB();
console.log(
  `1,000 distinct page trees on the large feed (${Math.round(bytes / 1_048_576)} MiB answered, ` +
    `${simulator.requestCount('/status/api/v2/summary.json')} summary fetches): ` +
    `heap ${before} MiB before, ${after} MiB after a full collection.`,
);
await running.close();
