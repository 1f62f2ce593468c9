/**
 * What each cache of the gateway keeps alive per entry, measured, beside what its size estimate
 * counts: the caches' bounds are in estimated bytes, so an estimate below what an entry retains
 * lets the cache hold more than its bound says (the parse cache's failures held 11 KB each, a
 * request's objects through their stack traces, where 1 KB was counted).
 *
 * Each cache is filled with `n` entries made by the gateway's own code (the parse cache through a
 * Yoga server with the gateway's schema, answers coded by `encodeAnswer`, lookups parsed as APIv2's
 * are); the heap after a full collection (and the finalizers it lets run) with them, minus before,
 * over `n`, is what an entry retains. Then the red team's flood through the gateway: 20,000
 * distinct unparseable APQ registrations, and the heap after a full collection; and what a full
 * collection of a 190 MiB heap costs (what `LiveHeap` may make once per 10 s).
 *
 * `npm run bench:caches` (`-- --flood 0` skips the flood).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createYoga } from 'graphql-yoga';
import { PAGE_TREE_QUERY } from '../src/http/page-tree-query.js';
import { encodeAnswer } from '../src/http/response-cache/encoded-answer.js';
import { ResponseCache } from '../src/http/response-cache/store.js';
import { registeredDocuments } from '../src/persisted-documents/registered-documents.js';
import { ParserCache } from '../src/plugins/parser-cache.js';
import { schema } from '../src/schema/index.js';
import { InMemoryClientQuota } from '../src/upstreams/verification/client-quota.js';
import { createContractCache } from '../src/upstreams/verification/contract-cache.js';
import { toContract } from '../src/upstreams/verification/v2-model.js';
import { WireV2Contract } from '../src/upstreams/verification/wire-v2.js';
import { startInProcessGateway } from './lib/in-process-gateway.js';
import { GATEWAY_NODE_FLAGS } from './lib/processes.js';

const { values: options } = parseArgs({
  options: { flood: { type: 'string', default: '20000' } },
});

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap and array buffers in use after a full collection, and after the finalizers it queued. */
async function retainedBytes(): Promise<number> {
  // Finalizers run, and array buffers are swept, after a collection: collect until it settles.
  let previous = Number.POSITIVE_INFINITY;
  for (;;) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    const bytes = heapUsed + arrayBuffers;
    if (bytes >= previous - 64 * 1024) return Math.min(bytes, previous);
    previous = bytes;
  }
}

interface Row {
  cache: string;
  entry: string;
  n: number;
  estimate: number;
  measured: number;
}
const rows: Row[] = [];

/**
 * Fills a cache with `n` entries (`fill`), and records what one costs by its estimate (`counted`
 * before and after, over `n`) and on the heap.
 */
async function measure(
  cache: string,
  entry: string,
  n: number,
  counted: () => number,
  fill: () => Promise<void> | void,
): Promise<void> {
  const countedBefore = counted();
  const before = await retainedBytes();
  await fill();
  const after = await retainedBytes();
  rows.push({
    cache,
    entry,
    n,
    estimate: (counted() - countedBefore) / n,
    measured: (after - before) / n,
  });
}

// The parse cache, as Yoga runs it: every document through Yoga's parse and validation.
const parseCacheOf = () => {
  const cache = new ParserCache();
  const yoga = createYoga({
    schema,
    parserAndValidationCache: false,
    plugins: [cache.plugin],
    logging: false,
    // No resolver runs: a document's entry is made by its parse and validation alone.
    context: () => {
      throw new Error('not executed');
    },
  });
  const post = async (body: unknown) => {
    const response = await yoga.fetch('http://gateway/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
  };
  const run = async (documents: readonly string[]) => {
    // Sixteen at a time, as clients' requests overlap.
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < documents.length) await post({ query: documents[next++] });
      }),
    );
  };
  return { cache, run };
};
{
  const kinds = {
    'page tree (91 tokens)': (i: number) => `${PAGE_TREE_QUERY}\n# ${i}`,
    'small query (7 tokens)': (i: number) => `{ statusPage { name } } # ${i}`,
    'parse failure (the APQ flood)': (i: number) => `{ statusPage { name } # ${i}\n`,
    'validation failure': (i: number) => `{ statusPage { name nope${i} } }`,
  };
  // As many as the cache keeps without evicting any (16 MiB of estimate).
  const counts = [300, 3_000, 6_000, 3_000];
  // The first requests compile what every request shares.
  const warm = parseCacheOf();
  for (const make of Object.values(kinds)) {
    await warm.run(Array.from({ length: 100 }, (_, i) => make(-1 - i)));
  }
  for (const [index, [entry, make]] of Object.entries(kinds).entries()) {
    const n = counts[index] as number;
    const { cache, run } = parseCacheOf();
    await measure(
      'parse cache',
      entry,
      n,
      () => cache.bytes,
      () => run(Array.from({ length: n }, (_, i) => make(i))),
    );
    if (cache.size !== n) throw new Error(`${entry}: ${cache.size} kept of ${n}`);
  }
}

// APQ's registered documents: texts and hashes as JSON.parse makes them from a request's body.
{
  const store = registeredDocuments(64 * 1024 * 1024);
  const n = 10_000;
  await measure(
    'APQ store',
    '60-character document',
    n,
    () => store.calculatedSize,
    () => {
      for (let i = 0; i < n; i += 1) {
        const query = `{ statusPage { name url status { indicator } } } # ${String(i).padStart(6)}`;
        const hash = createHash('sha256').update(query).digest('hex');
        const body = JSON.parse(JSON.stringify({ query, hash })) as { query: string; hash: string };
        store.set(body.hash, body.query);
      }
    },
  );
}

// The response cache: answers coded as the cached handler codes them.
{
  const vary = 'Accept, Accept-Encoding';
  const contentType = 'application/graphql-response+json; charset=utf-8';
  // An answer's bytes as the cached handler reads them: `Buffer.from(await response.arrayBuffer())`.
  const bytesOf = async (answer: unknown) =>
    Buffer.from(await new Response(JSON.stringify(answer)).arrayBuffer());
  const small = (i: number) =>
    bytesOf({ data: { statusPage: { name: `Page ${i}`, status: { indicator: 'none' } } } });
  const pageTree = (i: number) =>
    bytesOf({
      data: {
        statusPage: {
          name: `Page ${i}`,
          components: Array.from({ length: 60 }, (_, c) => ({
            id: `component-${i}-${c}`,
            name: `Component ${c}`,
            status: 'OPERATIONAL',
            description: 'A component of the page, as the feed describes it.',
          })),
        },
      },
    });
  const fill = async (cache: ResponseCache, n: number, make: typeof small) => {
    for (let i = 0; i < n; i += 1) {
      const answer = await encodeAnswer(await make(i), contentType, vary);
      const key = `POST application/json ${JSON.stringify({ query: `{ statusPage { name } } # ${i}` })}`;
      const generation = i;
      cache.keep(key, {
        answer,
        current: (now) => now >= 0 && generation >= 0,
        freshUntil: Date.now() + 30_000,
        stale: false,
        cacheControl: { maxAge: -1, value: '' },
        operation: undefined,
        operationField: '',
        countHit: (status, seconds) => void [status, seconds, generation],
      });
    }
  };
  // The first answers compile what every answer shares (the codings, the headers).
  await fill(new ResponseCache(), 200, small);
  await fill(new ResponseCache(), 200, pageTree);
  for (const [entry, make] of [
    ['small answer (90 bytes)', small],
    ['page tree answer (9 KB, coded)', pageTree],
  ] as const) {
    const cache = new ResponseCache();
    const n = 1_000;
    await measure(
      'response cache',
      entry,
      n,
      () => cache.bytes,
      () => fill(cache, n, make),
    );
  }
}

// The contract cache: lookups parsed as APIv2's `lookUp` parses them.
{
  const n = 5_000;
  const cache = createContractCache({
    maxBytes: 64 * 1024 * 1024,
    ttlMs: 600_000,
    load: async (chainId, address) => {
      const text = JSON.stringify({
        match: 'exact_match',
        creationMatch: 'exact_match',
        runtimeMatch: 'exact_match',
        chainId,
        address,
        verifiedAt: '2025-03-14T09:26:53Z',
        matchId: String(1_000_000 + Number.parseInt(address.slice(-6), 16)),
        compilation: {
          name: 'Token',
          compilerVersion: '0.8.26+commit.8a97fa7a',
          fullyQualifiedName: 'contracts/Token.sol:Token',
        },
      });
      const wire = WireV2Contract.parse(JSON.parse(text));
      return {
        contract: toContract(wire),
        etag: `"${createHash('sha1').update(text).digest('hex')}"`,
        bytes: Buffer.byteLength(text),
      };
    },
  });
  await measure(
    'contract cache',
    'verified contract',
    n,
    () => cache.bytes,
    async () => {
      for (let i = 0; i < n; i += 1) {
        await cache.get('1', `0x${i.toString(16).padStart(40, '0')}`);
      }
    },
  );
}

// Per-client verification allowances: a count per client, at most 10,000 clients.
{
  const quota = new InMemoryClientQuota({ limit: 10, windowMs: 600_000 });
  const n = 10_000;
  await measure(
    'client quotas',
    'client address (no estimate: 10,000 at most)',
    n,
    () => 0,
    () => {
      for (let i = 0; i < n; i += 1) quota.take(`2001:db8::${i.toString(16)}`);
    },
  );
}

const table = rows.map(({ cache, entry, n, estimate, measured }) => ({
  cache,
  entry,
  n,
  'estimate (B)': Math.round(estimate),
  'measured (B)': Math.round(measured),
  'measured / estimate': estimate > 0 ? Number((measured / estimate).toFixed(2)) : '-',
}));
console.table(table);

// The flood through the gateway (issue 36): distinct APQ registrations of documents that do not parse.
const flood = Number(options.flood);
if (flood > 0) {
  const running = await startInProcessGateway({
    env: { NODE_ENV: 'production' },
    logLevel: 'error',
  });
  const register = async (i: number) => {
    const query = `{ statusPage { name } # ${i}\n`;
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const response = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, extensions: { persistedQuery: { version: 1, sha256Hash } } }),
    });
    await response.arrayBuffer();
  };
  for (let i = 0; i < 100; i += 1) await register(-1 - i);
  const before = await retainedBytes();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < flood) await register(next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const after = await retainedBytes();
  console.log(
    `${flood.toLocaleString('en')} distinct unparseable APQ registrations in ${seconds.toFixed(1)} s: ` +
      `heap after a full collection ${(before / 2 ** 20).toFixed(1)} MiB before, ${(after / 2 ** 20).toFixed(1)} MiB after ` +
      `(${Math.round((after - before) / flood)} bytes a registration; the parse cache keeps at most 16 MiB of estimate).`,
  );
  await running.close();
}

/*
 * What a full collection costs (the live-heap reading makes one at most every 10 s, when V8 made
 * none and the heap in use is over an admission line): the Dockerfile's node flags, 190 MiB of small
 * objects live (the heap of the old parse cache after the flood), 20 MB of garbage before each.
 */
const COLLECTION = `
const { setFlagsFromString, getHeapStatistics } = require('node:v8');
setFlagsFromString('--expose-gc');
const gc = require('node:vm').runInNewContext('gc');
const live = [];
while (getHeapStatistics().used_heap_size < 190 * 2 ** 20) {
  const chunk = [];
  for (let i = 0; i < 10000; i++) chunk.push({ a: 'x' + i + Math.random(), b: [i, i + 1], c: { d: i } });
  live.push(chunk);
}
const pauses = [];
for (let round = 0; round < 5; round++) {
  let garbage = [];
  for (let i = 0; i < 200000; i++) garbage.push({ x: i, y: String(i) });
  garbage = null;
  const started = performance.now();
  gc();
  pauses.push(Math.round(performance.now() - started));
}
console.log(JSON.stringify({ live: Math.round(getHeapStatistics().used_heap_size / 2 ** 20), kept: live.length, pauses }));
`;
const collection = JSON.parse(
  execFileSync(process.execPath, [...GATEWAY_NODE_FLAGS, '-e', COLLECTION], { encoding: 'utf8' }),
) as { live: number; pauses: number[] };
console.log(
  `A full collection with ${collection.live} MiB live (the Dockerfile's node flags): ${collection.pauses.join(', ')} ms.`,
);
