/**
 * What a client's JSON text may hold once parsed (`MAX_JSON_VALUES`, `MAX_JSON_DEPTH`). Bytes do
 * not bound it: 8 MiB of `[{},{},…]` parses into 2.8 million objects, 179 MiB of heap.
 */
export interface JsonBudget {
  /**
   * Values, counted as the text's `{`, `[`, `,` and `:` outside strings: every object, array,
   * member and element after a container's first counts at least once.
   */
  readonly maxValues: number;
  /** Objects and arrays open inside one another. */
  readonly maxDepth: number;
}

/** A JSON text over its budget, refused before it was parsed. */
export class JsonBudgetExceeded extends Error {
  override readonly name = 'JsonBudgetExceeded';

  constructor(
    /** The variable that sets the bound it is over. */
    readonly limit: 'MAX_JSON_VALUES' | 'MAX_JSON_DEPTH',
    readonly max: number,
  ) {
    super(
      limit === 'MAX_JSON_VALUES'
        ? `It holds more than ${max} JSON values (MAX_JSON_VALUES).`
        : `Its JSON nests deeper than ${max} objects and arrays (MAX_JSON_DEPTH).`,
    );
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * `JSON.parse`, for a text within `budget` only (`checkJsonBudget`): a bomb costs the scan of its
 * first `maxValues` values, never its parse. A text that is not JSON throws `JSON.parse`'s
 * `SyntaxError`.
 */
export function parseJsonWithin(text: string, budget: JsonBudget): unknown {
  checkJsonBudget(text, budget);
  return JSON.parse(text);
}

/**
 * One pass over a JSON text that counts its values and depth without allocating, and throws
 * `JsonBudgetExceeded` at the first past `budget`. It does not check that the text is JSON.
 */
export function checkJsonBudget(text: string, budget: JsonBudget): void {
  const { maxValues, maxDepth } = budget;
  const length = text.length;
  let values = 0;
  let depth = 0;
  for (let i = 0; i < length; i += 1) {
    const char = text.charCodeAt(i);
    if (char === QUOTE) {
      // Strings are what a real input is made of (sources): skipped by the engine's own search.
      i = closingQuote(text, i);
    } else if (char === COMMA || char === COLON) {
      if (++values > maxValues) throw new JsonBudgetExceeded('MAX_JSON_VALUES', maxValues);
    } else if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      if (++values > maxValues) throw new JsonBudgetExceeded('MAX_JSON_VALUES', maxValues);
      if (++depth > maxDepth) throw new JsonBudgetExceeded('MAX_JSON_DEPTH', maxDepth);
    } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
}

/** The index of the quote that closes the string opened at `open`; the text's end if none does. */
function closingQuote(text: string, open: number): number {
  let quote = open;
  for (;;) {
    quote = text.indexOf('"', quote + 1);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
  }
}
