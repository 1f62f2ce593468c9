/**
 * What status pages hold in memory, and the byte budget that bounds them (issue 36). Run it on
 * Node 24 under the Dockerfile's heap flags, so that the default STATUS_PAGES_MAX_BYTES is
 * production's:
 *
 *   node_modules/.bin/node --max-old-space-size=256 --max-semi-space-size=8 --no-memory-reducer \
 *     --no-allocation-site-pretenuring --import tsx bench/page-memory.ts
 *
 * 1. Per document: the heap one snapshot retains (after a full collection) against the length of
 *    the JSON it was built from, on the real pages' documents: the factors `status-feed.ts`
 *    estimates with.
 * 2. Per page: what a page holds besides its snapshots, 1,000 pages of feeds that do not answer.
 * 3a. 200 pages of real documents read one after another: heap against the estimate.
 * 3. The sweep: 1,000 configured pages serving real documents, behind 50 hosts (loopback ports),
 *    swept three rounds by a query of 30 aliases × 50 slugs reading all four documents; the heap
 *    after a full collection against the estimate, and whether another client is answered.
 */

import { readFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pino from 'pino';
import { startSimulator } from '../simulator/src/server.js';
import { loadConfig } from '../src/config.js';
import { createGateway } from '../src/gateway.js';
import { createHttpServer } from '../src/http/server.js';
import { createLogger } from '../src/observability/logger.js';
import {
  buildIncidentHistory,
  buildSummary,
  buildUpcoming,
} from '../src/providers/statuspage-v2/build.js';
import {
  WireIncidentHistory,
  WireSummary,
  WireUpcoming,
} from '../src/providers/statuspage-v2/wire.js';
import { StatusPages } from '../src/upstreams/status-feed/status-pages.js';
import { statusPagesFile } from '../test/helpers/status-pages-file.js';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const heapUsed = () => {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
};
const MiB = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`;

const FEEDS = new URL('../test/fixtures/real-feeds/', import.meta.url);
const HISTORY = new URL('../test/fixtures/real-history/', import.meta.url);
const read = (base: URL, path: string) => readFileSync(new URL(path, base), 'utf8');
const PAGE = { slug: 'bench', baseUrl: 'http://127.0.0.1:9/api/v2' };

// 1. Per document.
const kinds = {
  summary: (text: string) => buildSummary(WireSummary.parse(JSON.parse(text)), PAGE).snapshot,
  incidents: (text: string) =>
    buildIncidentHistory(WireIncidentHistory.parse(JSON.parse(text)), PAGE).snapshot,
  maintenances: (text: string) =>
    buildUpcoming(WireUpcoming.parse(JSON.parse(text)), PAGE).snapshot,
};
const schemas = {
  summary: WireSummary,
  incidents: WireIncidentHistory,
  maintenances: WireUpcoming,
};
const documents: [string, keyof typeof kinds, string][] = [
  ...['claude', 'github', 'openai', 'twilio', 'zoom'].map(
    (page) => [`${page} summary.json`, 'summary', read(FEEDS, `${page}/summary.json`)] as const,
  ),
  ['claude scheduled-maintenances.json', 'maintenances', read(FEEDS, 'claude/upcoming.json')],
  ['twilio incidents.json', 'incidents', read(HISTORY, 'twilio@2023-03-09/incidents.json')],
].map(([name, kind, text]) => [name, kind as keyof typeof kinds, text]);
console.log(
  '| document | body bytes | stored JSON bytes | retained per snapshot | × body | × stored |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
const COPIES = 40;
for (const [name, kind, text] of documents) {
  const build = kinds[kind];
  const stored = JSON.stringify(schemas[kind].parse(JSON.parse(text))).length;
  const kept: unknown[] = [];
  const before = heapUsed();
  // Each copy parsed from its own text, as each fetch is.
  for (let i = 0; i < COPIES; i += 1) kept.push(build(`${text}${' '.repeat(i)}`));
  const retained = (heapUsed() - before) / COPIES;
  kept.length = 0;
  console.log(
    `| ${name} | ${text.length} | ${stored} | ${Math.round(retained)} | ${(retained / text.length).toFixed(2)} | ${(retained / stored).toFixed(2)} |`,
  );
}

// 2. Per page, besides its snapshots. In functions: an async module's own locals outlive their
// blocks, and would keep what they measured.
await (async () => {
  // A port nothing listens on: connections are refused, as a dead page's are.
  const closedPort = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
  const PAGES = 1_000;
  const slugs = Array.from({ length: PAGES }, (_, i) => `p${i}`);
  const config = loadConfig({
    STATUS_PAGES_FILE: statusPagesFile(
      slugs.map((slug) => ({ slug, baseUrl: `http://127.0.0.1:${closedPort}/${slug}/api/v2` })),
    ),
    VERIFY_BASE_URL: 'http://127.0.0.1:9',
    STATUS_PAGES_MAX_BYTES: String(1024 ** 3),
    UPSTREAM_RETRIES: '0',
  });
  // Failures are logged, as in production (which formats their stacks).
  const logger = pino({ level: 'warn' }, pino.destination('/dev/null'));
  const pages = new StatusPages({
    config: config.statusFeed,
    feed: { ...config.statusFeed, logger },
    logger,
  });
  const before = heapUsed();
  for (const slug of slugs) pages.get(slug);
  const made = heapUsed();
  const documents = ['summary', 'upcoming', 'incidentHistory', 'maintenanceHistory'] as const;
  for (const slug of slugs) {
    const { feed } = pages.get(slug);
    await Promise.all(documents.map((document) => feed[document]().catch(() => {})));
  }
  const failed = heapUsed();
  console.log(
    `\n${PAGES} pages made, none fetched: ${Math.round((made - before) / PAGES)} bytes each; their four documents failed: ${Math.round((failed - before) / PAGES)} bytes each (estimate ${pages.resident.bytes / PAGES}).`,
  );
  pages.close();
})();

// 3. The sweep.
const PAGES = 1_000;
const HOSTS = 50;
const served = {
  twilio: {
    '/summary.json': JSON.parse(read(FEEDS, 'twilio/summary.json')),
    '/incidents.json': JSON.parse(read(HISTORY, 'twilio@2023-03-09/incidents.json')),
  },
  zoom: { '/summary.json': JSON.parse(read(FEEDS, 'zoom/summary.json')) },
  claude: {
    '/summary.json': JSON.parse(read(FEEDS, 'claude/summary.json')),
    '/scheduled-maintenances/upcoming.json': JSON.parse(read(FEEDS, 'claude/upcoming.json')),
    '/scheduled-maintenances.json': JSON.parse(read(FEEDS, 'claude/upcoming.json')),
  },
  github: { '/summary.json': JSON.parse(read(FEEDS, 'github/summary.json')) },
  openai: { '/summary.json': JSON.parse(read(FEEDS, 'openai/summary.json')) },
};
const kindsServed = Object.values(served);
const slugs = Array.from({ length: PAGES }, (_, i) => `p${String(i).padStart(4, '0')}`);
const budget = process.env.STATUS_PAGES_MAX_BYTES;
const simulator = await startSimulator({
  statusPages: Object.fromEntries(
    slugs.map((slug, i) => [slug, { documents: kindsServed[i % kindsServed.length] ?? {} }]),
  ),
});
// Each port a host of its own, as pages of many providers are: the host bound does not serialise
// the sweep, so that it fetches all it can.
const simulatorPort = Number(new URL(simulator.statusBaseUrl).port);
const proxies: Server[] = [];
const ports: number[] = [];
for (let i = 0; i < HOSTS; i += 1) {
  const proxy = createServer((socket) => {
    const upstream = connect(simulatorPort, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address();
  ports.push(typeof address === 'object' && address ? address.port : 0);
  proxies.push(proxy);
}
// 3a. Resident pages of real documents, read one after another: heap against the estimate.
await (async () => {
  const RESIDENT = 200;
  const config = loadConfig({
    VERIFY_BASE_URL: simulator.verifyBaseUrl,
    STATUS_PAGES_FILE: statusPagesFile(
      slugs.slice(0, RESIDENT).map((slug) => ({ slug, baseUrl: simulator.statusPageUrl(slug) })),
    ),
    STATUS_PAGES_MAX_BYTES: String(1024 ** 3),
  });
  const logger = pino({ level: 'error' }, pino.destination('/dev/null'));
  const pages = new StatusPages({
    config: config.statusFeed,
    feed: { ...config.statusFeed, logger },
    logger,
  });
  const documents = ['summary', 'upcoming', 'incidentHistory', 'maintenanceHistory'] as const;
  const before = heapUsed();
  for (const slug of slugs.slice(0, RESIDENT)) {
    const { feed } = pages.get(slug);
    await Promise.all(documents.map((document) => feed[document]().catch(() => {})));
  }
  const measured = heapUsed() - before;
  console.log(
    `\n${RESIDENT} pages of real documents resident: ${MiB(measured)} of heap after a full collection, ${MiB(pages.resident.bytes)} estimated (${Math.round(measured / RESIDENT)} against ${Math.round(pages.resident.bytes / RESIDENT)} bytes a page)`,
  );
  pages.close();
})();

const config = loadConfig({
  NODE_ENV: 'production',
  VERIFY_BASE_URL: simulator.verifyBaseUrl,
  STATUS_PAGES_FILE: statusPagesFile(
    slugs.map((slug, i) => ({
      slug,
      baseUrl: `http://127.0.0.1:${ports[i % HOSTS]}/status/${slug}/api/v2`,
    })),
  ),
  ...(budget ? { STATUS_PAGES_MAX_BYTES: budget } : {}),
  ...(process.env.STATUS_PAGE_IDLE_MS
    ? { STATUS_PAGE_IDLE_MS: process.env.STATUS_PAGE_IDLE_MS }
    : {}),
});
const gateway = createGateway(config, { logger: createLogger('error') });
const { server, drain } = createHttpServer(gateway.listener, config.http);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/graphql`;

const origin = new URL(url).origin;
const metric = async (name: string) => {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line ? Number(line.split(' ').at(-1)) : 0;
};
const limit = getHeapStatistics().heap_size_limit;
const baseline = heapUsed();
console.log(
  `\nheap limit ${MiB(limit)}, STATUS_PAGES_MAX_BYTES ${budget ?? 'default'}; before the sweep: heap ${MiB(baseline)} after a full collection`,
);
const groups = Array.from({ length: PAGES / 50 }, (_, g) => slugs.slice(g * 50, g * 50 + 50));
const aliases = Array.from(
  { length: 30 },
  (_, i) =>
    `a${i}: statusPages(slugs: $s${i % groups.length}) { slug components { id } upcomingMaintenances { id } incidentHistory { id } maintenanceHistory { id } }`,
);
const query = `query (${groups.map((_, g) => `$s${g}: [String!]`).join(', ')}) { ${aliases.join(' ')} }`;
const variables = Object.fromEntries(groups.map((group, g) => [`s${g}`, group]));
let probes = 0;
let answered = 0;
let refused = 0;
let sweeping = true;
const prober = (async () => {
  while (sweeping) {
    probes += 1;
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ statusPage(slug: "p0001") { name } }' }),
      signal: AbortSignal.timeout(10_000),
    }).catch(() => undefined);
    const body =
      response && ((await response.json()) as { data?: { statusPage?: { name?: string } } });
    if (body?.data?.statusPage?.name) answered += 1;
    else if (response) refused += 1;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
})();
/** Sends the sweep once; what it answered, by error code (the body itself is not kept). */
const sweep = async () => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
  const codes: Record<string, number> = {};
  for (const error of body.errors ?? []) {
    const code = error.extensions?.code ?? '?';
    codes[code] = (codes[code] ?? 0) + 1;
  }
  return `HTTP ${response.status}, errors ${JSON.stringify(codes)}`;
};
for (let round = 1; round <= 3; round += 1) {
  const started = performance.now();
  const answer = await sweep();
  const ms = Math.round(performance.now() - started);
  const heap = heapUsed();
  console.log(
    `round ${round}: ${ms} ms, ${answer}; resident ${await metric('status_pages_resident')} pages, estimated ${MiB(await metric('status_pages_bytes'))}; heap ${MiB(heap)} after a full collection (${((heap / limit) * 100).toFixed(0)}% of the limit); upstream requests ${simulator.requests.length}`,
  );
}
sweeping = false;
await prober;
console.log(
  `another client: ${probes} probes of a page of a swept host during the sweep: ${answered} with the page, ${refused} with an error, ${probes - answered - refused} without an answer`,
);
for (const seconds of [1, 10]) {
  await new Promise((resolve) => setTimeout(resolve, seconds * 1_000));
  console.log(
    `${seconds} s later: resident ${await metric('status_pages_resident')} pages, estimated ${MiB(await metric('status_pages_bytes'))}; heap ${MiB(heapUsed())} after a full collection`,
  );
}
if (process.env.STATUS_PAGE_IDLE_MS) {
  await new Promise((resolve) => setTimeout(resolve, 2 * Number(process.env.STATUS_PAGE_IDLE_MS)));
  console.log(
    `idle pages let go: resident ${await metric('status_pages_resident')} pages; heap ${MiB(heapUsed())} after a full collection`,
  );
}
await drain(1_000);
await gateway.close();
await simulator.close();
for (const proxy of proxies) proxy.close();
