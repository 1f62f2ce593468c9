/**
 * The hand-written pieces kept beside a library that offers the same, each against the library's
 * own in the same run: rounds alternate A and B (the order swapped every round) and each round's
 * ratio is B's time ÷ A's, so that a machine that slows down mid-run weighs on both alike. The
 * median ratio of the rounds is what docs/performance.md quotes. `npx tsx bench/hand-written.ts`
 * (`--rounds N`, default 10; `--contenders DIR` adds the pairs against libraries the gateway does
 * not depend on, installed there first: `npm install --prefix DIR cockatiel@4`).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import DataLoader from 'dataloader';
import ky from 'ky';
import { LRUCache } from 'lru-cache';
import { pino } from 'pino';
import { WireSummary } from '../src/providers/statuspage-v2/wire.js';
import { CircuitBreaker } from '../src/upstreams/circuit-breaker.js';
import { RequestSlots } from '../src/upstreams/request-slots.js';
import { SnapshotCache } from '../src/upstreams/snapshot-cache.js';
import { createUpstreamClient } from '../src/upstreams/upstream-client.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '10' }, contenders: { type: 'string' } },
});
const ROUNDS = Number(values.rounds);

interface Contender {
  readonly name: string;
  /** Runs the work `iterations` times. */
  run(iterations: number): Promise<void>;
}

interface Pair {
  readonly what: string;
  readonly iterations: number;
  /** The hand-written piece. */
  readonly ours: Contender;
  /** The library's own. */
  readonly library: Contender;
}

async function timed(contender: Contender, iterations: number): Promise<number> {
  const started = performance.now();
  await contender.run(iterations);
  return performance.now() - started;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

/** `once` (schema/context.ts): a document read at most once per operation, as resolvers ask for it. */
function oncePair(): Pair {
  const snapshot = Promise.resolve({ value: {}, fetchedAt: new Date() });
  const read = () => snapshot;
  // What one operation does: makes its loaders, then 8 fields each ask for the summary.
  const READS = 8;
  function once<Value>(load: () => Promise<Value>): () => Promise<Value> {
    let promise: Promise<Value> | undefined;
    return () => {
      promise ??= load();
      return promise;
    };
  }
  return {
    what: 'a document read once per operation (8 reads), `once` against a one-key DataLoader',
    iterations: 20_000,
    ours: {
      name: 'once',
      async run(iterations) {
        for (let i = 0; i < iterations; i++) {
          const summary = once(read);
          await Promise.all(Array.from({ length: READS }, () => summary()));
        }
      },
    },
    library: {
      name: 'DataLoader',
      async run(iterations) {
        for (let i = 0; i < iterations; i++) {
          const documents = new DataLoader<'summary', unknown>((keys) =>
            Promise.all(keys.map(() => read())),
          );
          await Promise.all(Array.from({ length: READS }, () => documents.load('summary')));
        }
      },
    },
  };
}

/**
 * An upstream GET of a real summary (5.7 KB) answered from memory: the gateway's client (circuit,
 * request slots, the body read up to 10 MiB, `parseJsonBody`) against ky's `.json(schema)` alone.
 */
function upstreamPair(): Pair {
  const body = readFileSync(
    new URL('../test/fixtures/real-feeds/github/summary.json', import.meta.url),
    'utf8',
  );
  const fetch = async () => new Response(body, { headers: { 'content-type': 'application/json' } });
  const options = {
    timeoutMs: 5_000,
    retries: 2,
    retryDelayMs: 100,
    maxConcurrentRequests: 64,
    circuitFailureThreshold: 5,
    circuitCooldownMs: 10_000,
  };
  const client = createUpstreamClient({
    ...options,
    name: 'status feed',
    baseUrl: 'http://feed.test',
    logger: pino({ level: 'silent' }),
    fetch,
  });
  const http = ky.create({
    prefix: 'http://feed.test',
    timeout: options.timeoutMs,
    retry: { limit: options.retries, methods: ['get'] },
    fetch,
  });
  return {
    what: 'an upstream JSON GET checked with its zod schema, the gateway client against ky `.json(schema)`',
    iterations: 2_000,
    ours: {
      name: 'createUpstreamClient().getJson',
      async run(iterations) {
        for (let i = 0; i < iterations; i++) await client.getJson('/summary.json', WireSummary);
      },
    },
    library: {
      name: 'ky.get().json(schema)',
      async run(iterations) {
        for (let i = 0; i < iterations; i++) await http.get('summary.json').json(WireSummary);
      },
    },
  };
}

/**
 * A read of a fresh document, as a resolver's first read of it in an operation: `SnapshotCache.get`
 * against lru-cache's `fetch` of a fresh entry, with the options contract-cache.ts uses
 * (`fetchMethod`, `allowStale`, `noDeleteOnFetchRejection`).
 */
function snapshotPair(): Pair {
  const value = { page: 'summary' };
  const cache = new SnapshotCache({ load: async () => value, ttlMs: 3_600_000, maxStaleMs: 0 });
  const lru = new LRUCache<'summary', { value: object; fetchedAt: Date }>({
    max: 1,
    ttl: 3_600_000,
    allowStale: true,
    noDeleteOnFetchRejection: true,
    fetchMethod: async () => ({ value, fetchedAt: new Date() }),
  });
  return {
    what: 'a read of a fresh document, `SnapshotCache.get` against lru-cache `fetch`',
    iterations: 200_000,
    ours: {
      name: 'SnapshotCache.get',
      async run(iterations) {
        for (let i = 0; i < iterations; i++) await cache.get();
      },
    },
    library: {
      name: 'LRUCache.fetch',
      async run(iterations) {
        for (let i = 0; i < iterations; i++) await lru.fetch('summary');
      },
    },
  };
}

/** What the pair below uses of cockatiel 4. */
interface Cockatiel {
  handleAll: unknown;
  ConsecutiveBreaker: new (threshold: number) => unknown;
  circuitBreaker(policy: unknown, options: { halfOpenAfter: number; breaker: unknown }): unknown;
  bulkhead(limit: number, queue?: number): unknown;
  wrap(...policies: unknown[]): { execute<T>(fn: () => Promise<T>): Promise<T> };
}

/**
 * What each upstream call costs in the circuit and the request slots, with a burst of twice the
 * slots at once (half of it waits for a slot): upstream-client.ts's `admitted` with ours, against
 * cockatiel's `circuitBreaker` (`ConsecutiveBreaker`) wrapped around its `bulkhead`.
 */
function resiliencePair(cockatiel: Cockatiel): Pair {
  const SLOTS = 64;
  const BURST = 2 * SLOTS;
  const work = () => Promise.resolve(1);
  const circuit = new CircuitBreaker({ failureThreshold: 5, cooldownMs: 10_000 });
  const slots = new RequestSlots(SLOTS);
  async function admitted<Result>(send: () => Promise<Result>): Promise<Result> {
    if (!circuit.admit()) throw new Error('open');
    if (!(await slots.acquire(5_000))) throw new Error('no slot');
    try {
      const result = await send();
      circuit.succeeded();
      return result;
    } catch (error) {
      circuit.failed();
      throw error;
    } finally {
      slots.release();
    }
  }
  const policy = cockatiel.wrap(
    cockatiel.circuitBreaker(cockatiel.handleAll, {
      halfOpenAfter: 10_000,
      breaker: new cockatiel.ConsecutiveBreaker(5),
    }),
    cockatiel.bulkhead(SLOTS, Number.MAX_SAFE_INTEGER),
  );
  return {
    what: `a burst of ${BURST} upstream calls through the circuit and ${SLOTS} request slots, ours against cockatiel \`circuitBreaker\` + \`bulkhead\``,
    iterations: 2_000,
    ours: {
      name: 'CircuitBreaker + RequestSlots',
      async run(iterations) {
        for (let i = 0; i < iterations; i++) {
          await Promise.all(Array.from({ length: BURST }, () => admitted(work)));
        }
      },
    },
    library: {
      name: 'cockatiel wrap(circuitBreaker, bulkhead)',
      async run(iterations) {
        for (let i = 0; i < iterations; i++) {
          await Promise.all(Array.from({ length: BURST }, () => policy.execute(work)));
        }
      },
    },
  };
}

/** A package installed under `dir` (`--contenders`), not a dependency of the gateway. */
async function contender<Module>(dir: string, name: string): Promise<Module> {
  const path = createRequire(join(dir, 'package.json')).resolve(name);
  return (await import(pathToFileURL(path).href)) as Module;
}

const pairs = [oncePair(), upstreamPair(), snapshotPair()];
if (values.contenders) {
  pairs.push(resiliencePair(await contender<Cockatiel>(values.contenders, 'cockatiel')));
}

console.log(`${ROUNDS} rounds each, A and B alternating (order swapped every round)\n`);
console.log('| piece | ours | library | library time ÷ ours, median (min–max) |');
console.log('| --- | --- | --- | --- |');
for (const pair of pairs) {
  // Warm both up before timing.
  await timed(pair.ours, pair.iterations);
  await timed(pair.library, pair.iterations);
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const [first, second] = round % 2 ? [pair.library, pair.ours] : [pair.ours, pair.library];
    const firstMs = await timed(first, pair.iterations);
    const secondMs = await timed(second, pair.iterations);
    const oursMs = first === pair.ours ? firstMs : secondMs;
    ratios.push((first === pair.ours ? secondMs : firstMs) / oursMs);
  }
  const range = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
  console.log(
    `| ${pair.what} | ${pair.ours.name} | ${pair.library.name} | ${median(ratios).toFixed(2)} (${range}) |`,
  );
}
