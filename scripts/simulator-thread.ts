/**
 * `npm start`'s simulator, on a thread of its own (scripts/start.ts starts it): its TypeScript is
 * loaded through tsx here, where tsx's loader sees no other module, and it loads and answers while
 * the main thread loads and runs the gateway. It posts, for each upstream variable it was given,
 * what that variable is set to, where the simulator answers, and what to tell of it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';
import type { Simulator } from '../simulator/src/server.js';

/** What a simulated upstream's variable is set to, where it answers, and what to tell of it. */
export interface Simulated {
  readonly variable: string;
  readonly value: string;
  readonly url: string;
  readonly note: string;
}

register();
const { startSimulator } = await import('../simulator/src/server.js');
const simulator = await startSimulator();
const simulated: Simulated[] = (workerData as { variables: string[] }).variables.map((variable) =>
  variable === 'STATUS_PAGES_FILE' ? simulatedPagesFile(simulator) : verifyBaseUrl(simulator),
);
parentPort?.postMessage(simulated);

function verifyBaseUrl(simulator: Simulator): Simulated {
  const url = simulator.verifyBaseUrl;
  return {
    variable: 'VERIFY_BASE_URL',
    value: url,
    url,
    note: 'VERIFY_BASE_URL is unset; the built-in simulator answers',
  };
}

/** A `STATUS_PAGES_FILE` of the simulator's pages, written to a directory of its own. */
function simulatedPagesFile(simulator: Simulator): Simulated {
  const groups = new Map(
    simulator.statusFeed.summary.components
      .filter((component) => component.group)
      .map((component) => [component.name, component.id]),
  );
  const chains = [
    ['295', 'Mainnet'],
    ['296', 'Testnet'],
    ['297', 'Previewnet'],
  ].flatMap(([chainId, network]) => {
    const id = groups.get(network as string);
    return id ? [{ chainId, components: [id] }] : [];
  });
  const pages = [
    { slug: 'ledger', name: 'Ledger network', baseUrl: simulator.statusBaseUrl, chains },
    { slug: 'cloud', name: 'A cloud vendor', baseUrl: simulator.statusPageUrl('cloud') },
    { slug: 'ai-vendor', name: 'An AI vendor', baseUrl: simulator.statusPageUrl('ai-vendor') },
  ];
  const file = join(mkdtempSync(join(tmpdir(), 'status-pages-')), 'status-pages.json');
  writeFileSync(file, JSON.stringify({ pages }, null, 2));
  return {
    variable: 'STATUS_PAGES_FILE',
    value: file,
    url: simulator.statusBaseUrl,
    note: `STATUS_BASE_URL and STATUS_PAGES_FILE are unset; the built-in simulator answers, ${pages.length} pages: ${pages.map((page) => page.slug).join(', ')}, listed in ${file}`,
  };
}
