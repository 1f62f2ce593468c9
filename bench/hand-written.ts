/**
 * The hand-written pieces kept beside a library that offers the same, each against the library's
 * own in the same run: rounds alternate A and B (the order swapped every round) and each round's
 * ratio is B's time ÷ A's, so that a machine that slows down mid-run weighs on both alike. The
 * median ratio of the rounds is what docs/performance.md quotes. `npx tsx bench/hand-written.ts`
 * (`--rounds N`, default 10).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import DataLoader from 'dataloader';
import ky from 'ky';
import { pino } from 'pino';
import { WireSummary } from '../src/providers/statuspage-v2/wire.js';
import { createUpstreamClient } from '../src/upstreams/upstream-client.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '10' } } });
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

console.log(`${ROUNDS} rounds each, A and B alternating (order swapped every round)\n`);
console.log('| piece | ours | library | library time ÷ ours, median (min–max) |');
console.log('| --- | --- | --- | --- |');
for (const pair of [oncePair(), upstreamPair()]) {
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
