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

/**
 * Values any text may hold, however short: a request's own values (`_entities`' 200
 * representations are about 2,000) are never refused for their density.
 */
const VALUES_ANY_TEXT_MAY_HOLD = 4_096;
/**
 * Bytes of text per value past that: a text may hold one value per 8 of its bytes. Real inputs
 * are sparser (a standard JSON input about 4,000 bytes a value, the densest metadata.json among
 * Sourcify's fixtures, with its ABI, 22); a bomb is denser (`[{},…]`, 3). So what a text parses
 * into grows with its bytes, and `jsonHeapBound` can count it.
 */
const BYTES_PER_VALUE = 8;
/** Heap an empty object takes once parsed, the costliest value (measured: docs/performance.md). */
const HEAP_PER_VALUE = 67;
/** Heap a text's characters take, at most: two bytes each once one is past Latin-1. */
const TEXT_HEAP_PER_BYTE = 2;
/**
 * Heap an upload took per byte of its body at its peak while it was read, parsed, checked and sent
 * on (measured: docs/performance.md, `npm run bench:uploads`).
 */
const HANDLED_HEAP_PER_BYTE = 6;

/** The values a text of `length` characters may hold: `maxValues`, fewer for a short text. */
export const valuesWithin = (length: number, { maxValues }: JsonBudget): number =>
  Math.min(maxValues, Math.max(VALUES_ANY_TEXT_MAY_HOLD, Math.ceil(length / BYTES_PER_VALUE)));

/**
 * The most heap a client's JSON text of `bytes` takes while it is handled, parsed within `budget`:
 * its text and the copies made of it, or its text and every value it may hold, whichever is more.
 * What a request body is admitted by before it is read (`useBodyLimit`).
 */
export const jsonHeapBound = (bytes: number, budget: JsonBudget): number =>
  Math.max(
    bytes * HANDLED_HEAP_PER_BYTE,
    bytes * TEXT_HEAP_PER_BYTE + Math.min(bytes, valuesWithin(bytes, budget)) * HEAP_PER_VALUE,
  );

/** A JSON text over its budget, refused before it was parsed. */
export class JsonBudgetExceeded extends Error {
  override readonly name = 'JsonBudgetExceeded';

  constructor(
    /** The variable that sets the bound it is over. */
    readonly limit: 'MAX_JSON_VALUES' | 'MAX_JSON_DEPTH',
    readonly max: number,
    /** Whether `max` is what a text of its length may hold, below `MAX_JSON_VALUES`. */
    forItsLength = false,
  ) {
    super(
      limit === 'MAX_JSON_DEPTH'
        ? `Its JSON nests deeper than ${max} objects and arrays (MAX_JSON_DEPTH).`
        : forItsLength
          ? `It holds more than ${max} JSON values, the most a text of its length may hold (one per ${BYTES_PER_VALUE} bytes past ${VALUES_ANY_TEXT_MAY_HOLD}).`
          : `It holds more than ${max} JSON values (MAX_JSON_VALUES).`,
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
 * `JsonBudgetExceeded` at the first past `budget` (its values as many as its length allows:
 * `valuesWithin`). It does not check that the text is JSON.
 */
export function checkJsonBudget(text: string, budget: JsonBudget): void {
  const { maxDepth } = budget;
  const length = text.length;
  const maxValues = valuesWithin(length, budget);
  const tooMany = () =>
    new JsonBudgetExceeded('MAX_JSON_VALUES', maxValues, maxValues < budget.maxValues);
  let values = 0;
  let depth = 0;
  for (let i = 0; i < length; i += 1) {
    const char = text.charCodeAt(i);
    if (char === QUOTE) {
      // Strings are what a real input is made of (sources): skipped by the engine's own search.
      i = closingQuote(text, i);
    } else if (char === COMMA || char === COLON) {
      if (++values > maxValues) throw tooMany();
    } else if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      if (++values > maxValues) throw tooMany();
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
