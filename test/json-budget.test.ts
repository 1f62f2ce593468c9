import { describe, expect, it } from 'vitest';
import { JsonBudgetExceeded, jsonHeapBound, parseJsonWithin } from '../src/json-budget.js';

const budget = { maxValues: 5, maxDepth: 3 };

/** What `parseJsonWithin` throws for `text`, or `undefined` when it parses. */
function refusalOf(text: string, within = budget) {
  try {
    parseJsonWithin(text, within);
    return undefined;
  } catch (error) {
    return error instanceof JsonBudgetExceeded ? error.limit : (error as Error).name;
  }
}

describe('parseJsonWithin', () => {
  it('parses a text within its budget as JSON.parse does', () => {
    const text = '{"a":[1,2],"b":{"c":null}}';
    expect(refusalOf(text, { maxValues: 8, maxDepth: 2 })).toBeUndefined();
    expect(parseJsonWithin(text, { maxValues: 8, maxDepth: 2 })).toEqual(JSON.parse(text));
  });

  it('counts every {, [, , and : outside strings, and refuses the first past the budget', () => {
    // [ , , , , : one container and four separators: five counted.
    expect(refusalOf('[1,2,3,4,5]')).toBeUndefined();
    expect(refusalOf('[1,2,3,4,5,6]')).toBe('MAX_JSON_VALUES');
    expect(refusalOf('[{},{},{}]')).toBe('MAX_JSON_VALUES');
    expect(refusalOf('{"a":1,"b":2,"c":3}')).toBe('MAX_JSON_VALUES');
  });

  it('skips strings whole, escaped quotes and backslashes included', () => {
    const sources = JSON.stringify({ a: 'x{[,:"]}\\', b: '"\\"{,,,,,,,,}' });
    expect(refusalOf(sources)).toBeUndefined();
    expect(JSON.parse(sources)).toEqual(parseJsonWithin(sources, budget));
  });

  it('refuses nesting past maxDepth, whatever the count', () => {
    expect(refusalOf('[[[]]]')).toBeUndefined();
    expect(refusalOf('[[[[]]]]')).toBe('MAX_JSON_DEPTH');
    expect(refusalOf('{"a":{"b":{"c":{}}}}', { maxValues: 100, maxDepth: 3 })).toBe(
      'MAX_JSON_DEPTH',
    );
  });

  it("leaves a text that is not JSON to JSON.parse's SyntaxError", () => {
    expect(refusalOf('{"a":')).toBe('SyntaxError');
    expect(refusalOf('"unterminated')).toBe('SyntaxError');
    expect(refusalOf(']]]]{')).toBe('SyntaxError');
  });

  it('says which bound, with its variable, in its message', () => {
    expect(() => parseJsonWithin('[[[[]]]]', budget)).toThrow(
      'Its JSON nests deeper than 3 objects and arrays (MAX_JSON_DEPTH).',
    );
    expect(() => parseJsonWithin('[1,2,3,4,5,6]', budget)).toThrow(
      'It holds more than 5 JSON values (MAX_JSON_VALUES).',
    );
  });

  it('lets a text hold as many values as its length allows: 4,096, or one per 8 bytes', () => {
    const shipped = { maxValues: 100_000, maxDepth: 64 };
    // 6,000 empty objects in 18 KB: denser than one value per 8 bytes, past 4,096.
    const dense = `[${'{},'.repeat(5_999)}{}]`;
    expect(refusalOf(dense, shipped)).toBe('MAX_JSON_VALUES');
    expect(() => parseJsonWithin(dense, shipped)).toThrow(
      'It holds more than 4096 JSON values, the most a text of its length may hold (one per 8 bytes past 4096).',
    );
    // As many values, each a 20-byte string: as sparse as metadata with a large ABI.
    const sparse = JSON.stringify(Array.from({ length: 6_000 }, (_, i) => `value-${i}`.padEnd(17)));
    expect(refusalOf(sparse, shipped)).toBeUndefined();
    // What the admission counts grows with the bytes, however dense the text.
    expect(jsonHeapBound(dense.length, shipped)).toBeLessThan(dense.length * 40);
    expect(jsonHeapBound(8 * 1_048_576, shipped)).toBe(6 * 8 * 1_048_576);
  });
});
