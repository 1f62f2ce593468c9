import { describe, expect, it } from 'vitest';
import { JsonBudgetExceeded, parseJsonWithin } from '../src/json-budget.js';

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
});
