/**
 * The suite's own rules, checked on its sources.
 *
 * No test sleeps a fixed time over 100 ms. A test that waits for something to happen waits for
 * it (`eventually()` on what shows it: a request counted, a log line, a metric); a test about
 * time (a TTL, a poll interval, a cool-down) puts the code on a clock it moves (`testClock()`, a
 * `now` option); a test that something does not happen shows first that it would have by now (a
 * witness that did happen). A fixed sleep of up to 100 ms is tolerated where nothing else says
 * it, and none is better.
 *
 * Checked: `sleep(<ms>)` and `setTimeout(resolve, <ms>)` (a promise resolved after a time), whose
 * `<ms>` is a number, a constant of the file (`const NAME = <number>`) or arithmetic over them.
 * A time the check cannot work out (a variable) is refused too: say it with a constant.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const MAX_SLEEP_MS = 100;
/**
 * Where the waiting helpers are defined (`sleep`, `eventually`, a subscriber's `next`): how long
 * they wait is their callers' to say.
 */
const DEFINITIONS = new Set(['test/helpers/eventually.ts', 'test/helpers/subscriptions.ts']);

function sourceFiles(directory: string): string[] {
  return readdirSync(join(ROOT, directory), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(directory, name));
}

/** `expression` in ms, with the file's numeric constants put in; `undefined` if it is not that. */
function millisecondsOf(expression: string, source: string): number | undefined {
  const constants = new Map(
    [...source.matchAll(/\bconst\s+(\w+)\s*=\s*([\d_.]+)\s*;/g)].map(([, name, value]) => [
      name,
      (value ?? '').replaceAll('_', ''),
    ]),
  );
  const arithmetic = expression
    .replace(/\b[A-Za-z_]\w*\b/g, (name) => constants.get(name) ?? name)
    .replaceAll('_', '');
  if (!/^[\d.\s+\-*/()]+$/.test(arithmetic)) return undefined;
  const value: unknown = new Function(`return (${arithmetic});`)();
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Every fixed sleep over the limit, or whose length cannot be worked out, as `file:line: code`. */
function longSleeps(file: string): string[] {
  // Comments blanked out, lines kept: what they say is not a sleep.
  const source = readFileSync(join(ROOT, file), 'utf8').replace(
    /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g,
    (comment) => comment.replace(/[^\n]/g, ' '),
  );
  const found: string[] = [];
  const sleeps =
    /\bsleep\(([^()]*(?:\([^()]*\)[^()]*)*)\)|\bsetTimeout\(\s*(?:resolve|r)\s*,\s*([^()]*(?:\([^()]*\)[^()]*)*)\)/g;
  for (const match of source.matchAll(sleeps)) {
    const expression = (match[1] ?? match[2] ?? '').trim();
    const ms = millisecondsOf(expression, source);
    if (ms !== undefined && ms <= MAX_SLEEP_MS) continue;
    const line = source.slice(0, match.index).split('\n').length;
    found.push(`${file}:${line}: ${match[0]}${ms === undefined ? '' : ` (${ms} ms)`}`);
  }
  return found;
}

describe('the tests', () => {
  const files = [...sourceFiles('test'), ...sourceFiles('simulator/test')]
    .map((file) => relative(ROOT, join(ROOT, file)))
    .filter((file) => !DEFINITIONS.has(file));

  it('are found where the suite runs them', () => {
    expect(files).toContain('test/test-hygiene.test.ts');
    expect(files.some((file) => file.startsWith('simulator/test/'))).toBe(true);
  });

  it(`never sleep a fixed time over ${MAX_SLEEP_MS} ms`, () => {
    expect(files.flatMap(longSleeps)).toEqual([]);
  });

  it('tell a long sleep, and one they cannot read, from a short one', () => {
    const source = 'const TTL_MS = 150;\nconst SHORT = 20;\n';
    expect(millisecondsOf('3 * TTL_MS', source)).toBe(450);
    expect(millisecondsOf('SHORT', source)).toBe(20);
    expect(millisecondsOf('1_050', source)).toBe(1050);
    expect(millisecondsOf('ms', source)).toBeUndefined();
  });
});
