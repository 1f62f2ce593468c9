import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { LiveHeap } from '../../src/observability/live-heap.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MiB = 2 ** 20;
const used = () => getHeapStatistics().used_heap_size;

/**
 * Allocates arrays of 8 MB (in V8's large-object space, which only a full collection frees) until
 * the heap in use is over `line`, and returns them: garbage once the caller drops them.
 */
function fillPast(line: number): unknown[] {
  const filled: unknown[] = [];
  while (used() <= line) filled.push(new Array(1_000_000).fill(0));
  return filled;
}

const readers: LiveHeap[] = [];
afterEach(() => {
  for (const reader of readers.splice(0)) reader.close();
});
const reader = (options?: ConstructorParameters<typeof LiveHeap>[0]) => {
  const live = new LiveHeap(options);
  readers.push(live);
  return live;
};

describe('the live heap', () => {
  it('is the heap in use while that is under the line, without collecting', () => {
    const live = reader({ freshMs: 0 });
    const line = used() + 512 * MiB;
    expect(live.bytes(line)).toBeLessThanOrEqual(line);
    expect(live.collections).toBe(0);
  });

  it('leaves garbage out once the heap in use is over the line', () => {
    const live = reader({ freshMs: 0 });
    gc();
    const line = used() + 64 * MiB;
    fillPast(line);
    expect(used()).toBeGreaterThan(line);
    expect(live.bytes(line)).toBeLessThanOrEqual(line);
  });

  it('counts what is live over the line', () => {
    const live = reader({ freshMs: 0 });
    gc();
    const line = used() + 64 * MiB;
    const kept = fillPast(line);
    expect(live.bytes(line)).toBeGreaterThan(line);
    expect(kept.length).toBeGreaterThan(0);
  });

  it('collects at most once per freshMs, however many ask while garbage is over the line', () => {
    let now = 0;
    const live = reader({ freshMs: 10_000, now: () => now });
    gc();
    const line = used() + 64 * MiB;
    for (let i = 0; i < 5; i += 1) {
      fillPast(line);
      expect(live.bytes(line)).toBeLessThanOrEqual(line);
      now += 1_000;
    }
    expect(live.collections).toBeLessThanOrEqual(1);
  });
});
