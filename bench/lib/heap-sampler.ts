/**
 * Loaded into a gateway process with `--import` (and `--expose-gc`) by `bench/uploads.ts`: reads
 * the V8 heap in use every millisecond the event loop turns, and on SIGUSR2 writes one line,
 * `heap-sampler {"peak":…,"live":…,"limit":…}`: the most seen since the last line (garbage
 * included, as V8 must hold it until it collects), then the heap left after a full collection,
 * which the next peak starts from.
 */
import { getHeapStatistics } from 'node:v8';

const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('heap-sampler needs --expose-gc');

let peak = 0;
const sample = () => {
  const used = getHeapStatistics().used_heap_size;
  if (used > peak) peak = used;
};
setInterval(sample, 1).unref();

process.on('SIGUSR2', () => {
  sample();
  const seen = peak;
  collect();
  const { used_heap_size: live, heap_size_limit: limit } = getHeapStatistics();
  process.stdout.write(`heap-sampler ${JSON.stringify({ peak: seen, live, limit })}\n`);
  peak = live;
});
