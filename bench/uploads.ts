/**
 * What a large upload costs the gateway, for docs/performance.md (`npm run bench:uploads`):
 *
 * 1. Parsing a client's JSON within a budget: the scan of `src/json-budget.ts` before `JSON.parse`,
 *    `JSON.parse` alone, and a parse in a worker thread with `resourceLimits` (the text posted to
 *    it, the value posted back), on an 8 MiB standard JSON input (ASCII, and with a non-Latin-1
 *    character per source) and on the 8 MiB `[{},…]` bomb: milliseconds per MiB (median of
 *    alternating rounds) and the heap each leaves this thread holding.
 * 2. The heap one upload takes in the gateway, in a process of its own with the Dockerfile's flags
 *    (`bench/lib/heap-sampler.ts` loaded into it): the peak of the V8 heap in use (sampled every
 *    millisecond, and V8's own figure before each collection, `--trace-gc`) while maximal
 *    `verifyContractFromSource` uploads are read, scanned, parsed, coerced and sent on to the
 *    simulator, above what it held before; one, then two and four at once. Then four 8 MiB bombs
 *    at once while another client asks a query; four bombs, and four uploads, at once with the
 *    defaults; and the bomb parsed in full (the budget lifted, as the gateway was before it had
 *    one).
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import { startSimulator } from '../simulator/src/server.js';
import { fixtureContract } from '../simulator/src/verification/fixture.js';
import { checkJsonBudget, type JsonBudget, parseJsonWithin } from '../src/json-budget.js';
import { largeStdJsonInput, sourceInput } from '../test/helpers/verification-inputs.js';
import { freePort, LOOPBACK, spawnNode, waitForHttp } from './lib/processes.js';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const MiB = 1_048_576;
/** The gateway's defaults (`MAX_JSON_VALUES`, `MAX_JSON_DEPTH`). */
const BUDGET: JsonBudget = { maxValues: 100_000, maxDepth: 64 };
const ROUNDS = 9;
/** Contracts of the simulator, one per upload at once: it refuses a second job for a contract. */
const CONTRACTS = ['Greeter', 'Dai', 'FiatTokenProxy', 'Counter'].map(fixtureContract);
const MUTATION =
  'mutation ($input: VerifyFromSourceInput!) { verifyContractFromSource(input: $input) { __typename } }';

/** A request body verifying `contract` from `stdJsonInput`, as a client sends it. */
const bodyWith = (stdJsonInput: unknown, contract = CONTRACTS[0]) =>
  JSON.stringify({
    query: MUTATION,
    variables: { input: sourceInput(contract, { stdJsonInput }) },
  });
/** The largest input `VERIFY_MAX_SOURCE_BYTES` (8 MiB) lets through, as a Foundry build sends it. */
const realBody = (nonLatin1: boolean, contract = CONTRACTS[0]) =>
  bodyWith(largeStdJsonInput(8 * MiB - 40_000, { contract, nonLatin1 }), contract);
/** 8 MiB of `[{},{},…]` as `stdJsonInput`: the issue's bomb. */
const bombBody = () => {
  const [head, tail] = bodyWith('BOMB').split('"BOMB"') as [string, string];
  const count = Math.floor((8 * MiB - head.length - tail.length) / 3);
  return `${head}[${'{},'.repeat(count - 1)}{}]${tail}`;
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;
const mib = (bytes: number) => (bytes / MiB).toFixed(1);

// ---------------------------------------------------------------------------------------------
// 1. The parse.

/** A worker that parses what it is sent and sends the value back; it dies past its limits. */
const PARSE_WORKER = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (text) => parentPort.postMessage(JSON.parse(text)));
`;
const WORKER_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };
let worker: Worker | undefined;
const startWorker = async () => {
  const started = new Worker(PARSE_WORKER, { eval: true, resourceLimits: WORKER_LIMITS });
  await new Promise((resolve) => started.once('online', resolve));
  return started;
};
const parseInWorker = async (text: string): Promise<unknown> => {
  worker ??= await startWorker();
  const current = worker;
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      worker = undefined;
      current.off('message', resolve);
      reject(error);
    };
    current.once('message', (value) => {
      current.off('error', onError);
      resolve(value);
    });
    current.once('error', onError);
    current.postMessage(text);
  });
};

type Contender = (text: string) => unknown;
const CONTENDERS: Record<string, Contender> = {
  'scan alone': (text) => checkJsonBudget(text, BUDGET),
  'scan, then JSON.parse': (text) => parseJsonWithin(text, BUDGET),
  'JSON.parse alone': (text) => JSON.parse(text),
  'worker (resourceLimits 64 MiB old space)': (text) => parseInWorker(text),
};

/** Runs `contender` on `text`: its time, whether it refused, and the heap its result holds here. */
async function once(contender: Contender, text: string) {
  collect();
  const before = process.memoryUsage().heapUsed;
  const started = performance.now();
  let result: unknown;
  let outcome = 'parsed';
  try {
    result = await contender(text);
  } catch (error) {
    outcome = error instanceof Error ? error.name || error.message : String(error);
  }
  const ms = performance.now() - started;
  collect();
  const held = process.memoryUsage().heapUsed - before;
  if (result === text) throw new Error('unreachable');
  return { ms, outcome, held };
}

/** Part 1's table. */
async function measureParse() {
  console.log('## 1. Parsing a client JSON text within a budget\n');
  console.log(
    `Budget: ${BUDGET.maxValues} values, depth ${BUDGET.maxDepth}; ${ROUNDS} rounds, the contenders' order turned every round; medians.\n`,
  );
  console.log('| input | contender | outcome | ms | ms per MiB | heap held by the result |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const [name, make] of [
    ['8 MiB standard JSON input, ASCII', () => realBody(false)],
    ['8 MiB standard JSON input, a non-Latin-1 character per source', () => realBody(true)],
    ['8 MiB `[{},…]` bomb', bombBody],
  ] as const) {
    // Flat, as the body reader's text is once the scan or the parse has looked at it.
    const text = make();
    checkJsonBudget(text, {
      maxValues: Number.MAX_SAFE_INTEGER,
      maxDepth: Number.MAX_SAFE_INTEGER,
    });
    const megabytes = Buffer.byteLength(text) / MiB;
    const names = Object.keys(CONTENDERS);
    const runs = new Map(
      names.map((contender) => [contender, [] as Awaited<ReturnType<typeof once>>[]]),
    );
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? names : [...names].reverse();
      for (const contender of order) {
        // The bomb in full takes seconds and 180 MiB a time: three rounds of it say enough.
        if (
          name.includes('bomb') &&
          contender !== 'scan alone' &&
          contender !== 'scan, then JSON.parse' &&
          round >= 3
        )
          continue;
        runs.get(contender)?.push(await once(CONTENDERS[contender] as Contender, text));
      }
    }
    for (const [contender, samples] of runs) {
      const ms = median(samples.map((sample) => sample.ms));
      console.log(
        `| ${name} | ${contender} | ${samples[0]?.outcome} | ${ms.toFixed(1)} | ${(ms / megabytes).toFixed(2)} | ${contender.startsWith('worker') ? 'not seen by `heapUsed`: the clone posted back' : `${mib(median(samples.map((sample) => sample.held)))} MiB`} |`,
      );
    }
  }
  await worker?.terminate();
  const workerStart = [] as number[];
  for (let i = 0; i < 5; i += 1) {
    const started = performance.now();
    await (await startWorker()).terminate();
    workerStart.push(performance.now() - started);
  }
  console.log(
    `\nStarting a parse worker (and ending it): ${median(workerStart).toFixed(1)} ms, median of 5.\n`,
  );
}

// `-- heap`: part 2 alone.
if (process.argv[2] !== 'heap') await measureParse();

// ---------------------------------------------------------------------------------------------
// 2. The heap per upload, in the gateway's own process.

const simulator = await startSimulator();

/** The Dockerfile's node flags, with the sampler and V8's collection trace. */
const NODE_FLAGS = [
  '--no-allocation-site-pretenuring',
  '--no-memory-reducer',
  '--max-semi-space-size=8',
  '--max-old-space-size=256',
  '--expose-gc',
  '--trace-gc',
  '--import',
  'tsx',
  '--import',
  './bench/lib/heap-sampler.ts',
];

async function startGateway(env: Record<string, string>) {
  const port = await freePort();
  let gcPeak = 0;
  const samples: { peak: number; live: number; limit: number }[] = [];
  const gateway = spawnNode({
    name: 'gateway',
    script: 'src/main.ts',
    nodeFlags: NODE_FLAGS,
    port,
    env: {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      STATUS_BASE_URL: simulator.statusBaseUrl,
      VERIFY_BASE_URL: simulator.verifyBaseUrl,
      VERIFY_RATE_LIMIT: '1000',
      VERIFY_WAIT_MS: '5000',
      VERIFY_POLL_INTERVAL_MS: '20',
      ...env,
      PORT: String(port),
      HOST: LOOPBACK,
    },
    onLine: (line) => {
      const traced = /: (?:Scavenge|Mark-Compact|Mark-Sweep|Minor Mark-Sweep)\S* ([\d.]+) \(/.exec(
        line,
      );
      if (traced) gcPeak = Math.max(gcPeak, Number(traced[1]) * MiB);
      if (line.startsWith('heap-sampler ')) samples.push(JSON.parse(line.slice(13)));
    },
  });
  await waitForHttp(gateway, '/health');
  /** The peak since the last reading (sampled, or V8's before a collection), and the heap after a full one. */
  const reading = async () => {
    const count = samples.length;
    process.kill(gateway.pid, 'SIGUSR2');
    while (samples.length === count) await new Promise((resolve) => setTimeout(resolve, 5));
    const sample = samples[samples.length - 1] as (typeof samples)[number];
    const peak = Math.max(sample.peak, gcPeak);
    gcPeak = 0;
    return { ...sample, peak };
  };
  const post = async (body: string) => {
    const response = await fetch(`${gateway.origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
    });
    const text = await response.text();
    const code = /"(?:code|__typename)":"(\w+)"/.exec(text)?.[1] ?? text.slice(0, 80);
    return `${response.status} ${code}`;
  };
  return { gateway, reading, post };
}

console.log('## 2. The heap uploads take in the gateway\n');
console.log(
  "The gateway in its own process with the Dockerfile's flags (`--max-old-space-size=256`, `--max-semi-space-size=8`), NODE_ENV=production, against the simulator. Peak: the V8 heap in use, garbage included, sampled every millisecond and before each collection; above: the peak less the heap after a full collection before the uploads.\n",
);
console.log(
  '| uploads at once | body | answers | peak heap | above the heap before | per upload, per byte of body |',
);
console.log('| --- | --- | --- | --- | --- | --- |');

const measure = async (
  gateway: Awaited<ReturnType<typeof startGateway>>,
  label: string,
  bodies: string[],
) => {
  const before = await gateway.reading();
  const answers = await Promise.all(bodies.map((body) => gateway.post(body)));
  const after = await gateway.reading();
  const above = after.peak - before.live;
  const bytes = bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0);
  const counts = new Map<string, number>();
  for (const answer of answers) counts.set(answer, (counts.get(answer) ?? 0) + 1);
  console.log(
    `| ${bodies.length} | ${label} | ${[...counts].map(([answer, count]) => `${count}× ${answer}`).join(', ')} | ${mib(after.peak)} MiB | ${mib(above)} MiB | ${mib(above / bodies.length)} MiB, ${(above / bytes).toFixed(2)} |`,
  );
  return { above, after };
};

{
  const gateway = await startGateway({
    VERIFY_MAX_CONCURRENT_UPLOADS: '4',
    REQUEST_BODIES_HEAP_SHARE: '1',
  });
  // Warm: the first verification compiles the paths the measured ones take.
  await gateway.post(bodyWith(largeStdJsonInput(300_000)));
  for (const nonLatin1 of [false, true]) {
    const bodies = CONTRACTS.map((contract) => realBody(nonLatin1, contract));
    const label = `8 MiB standard JSON input${nonLatin1 ? ', non-Latin-1' : ''} (${mib(Buffer.byteLength(bodies[0] ?? ''))} MiB)`;
    for (let run = 0; run < 3; run += 1) {
      simulator.verification.reset();
      await measure(gateway, label, bodies.slice(0, 1));
    }
    for (const count of [2, 4]) {
      simulator.verification.reset();
      await measure(gateway, label, bodies.slice(0, count));
    }
  }

  // The attack of issue 36, with another client asking meanwhile.
  const bomb = bombBody();
  const before = await gateway.reading();
  const asked = (async () => {
    const started = performance.now();
    const answer = await fetch(`${gateway.gateway.origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ statusPage { name } }' }),
    });
    return `${answer.status} in ${(performance.now() - started).toFixed(0)} ms`;
  })();
  const bombs = await Promise.all(Array.from({ length: 4 }, () => gateway.post(bomb)));
  const after = await gateway.reading();
  console.log(
    `| 4 | 8 MiB \`[{},…]\` bombs | ${bombs.join(', ')} | ${mib(after.peak)} MiB | ${mib(after.peak - before.live)} MiB | the query asked meanwhile: ${await asked}; heap after a full collection ${mib(after.live)} of ${mib(after.limit)} MiB |`,
  );
  await gateway.gateway.stop();
}

{
  // As production runs: the default REQUEST_BODIES_HEAP_SHARE admits one upload of 8 MiB.
  const gateway = await startGateway({});
  await gateway.post(bodyWith(largeStdJsonInput(300_000)));
  const bomb = bombBody();
  await measure(gateway, '8 MiB `[{},…]` bombs, the defaults', [bomb, bomb, bomb, bomb]);
  simulator.verification.reset();
  await measure(
    gateway,
    '8 MiB standard JSON inputs, non-Latin-1, the defaults',
    CONTRACTS.map((contract) => realBody(true, contract)),
  );
  await gateway.gateway.stop();
}

{
  // As before the budget: the bomb parsed in full.
  const gateway = await startGateway({ MAX_JSON_VALUES: '1000000000', MAX_JSON_DEPTH: '10000' });
  await gateway.post(bodyWith(largeStdJsonInput(300_000)));
  await measure(gateway, '8 MiB `[{},…]` bomb, no budget (parsed in full)', [bombBody()]);
  await gateway.gateway.stop();
}

await simulator.close();
