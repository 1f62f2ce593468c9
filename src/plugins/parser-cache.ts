import { type DocumentNode, GraphQLError, Source, type Token } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { stringBytes } from '../observability/heap-bytes.js';

/**
 * Estimated bytes of documents, parse failures and validation results kept at most, their text
 * counted; the least recently used go first.
 */
const MAX_BYTES = 16 * 1024 * 1024;
/**
 * Estimated bytes of the largest document kept: larger ones are parsed each time they come. A
 * document at `MAX_TOKENS` (2,000) is about 700 KB; the page tree (91 tokens), 34 KB.
 */
const MAX_ENTRY_BYTES = 1024 * 1024;

/*
 * What an entry holds on the heap, as `npm run bench:caches` measures it (docs/performance.md,
 * "What the caches hold"), on graphql 16 and node 24, rounded up: documents of 9 and 91 tokens held
 * 256 bytes besides their text and 344 a token; a parse failure 366 bytes besides its text and
 * message, a validation failure 490 besides its message.
 */
/** What V8 spends on a token and the AST node and location it makes. */
const BYTES_PER_TOKEN = 350;
/** An entry's slots in the cache and its record. */
const BYTES_PER_ENTRY = 128;
/** A document's own nodes, its `Source` and its link back to its text, and its validation's record. */
const BYTES_PER_DOCUMENT = 160;
/** A failure's record besides its message: its positions and extensions, its slot in a list. */
const BYTES_PER_FAILURE = 320;

/**
 * What a parse or validation error is answered again from: its message, where it points, and the
 * extensions it had when it was made. Never the error itself: until its `stack` is read, V8 keeps
 * an error's stack trace as frames, each holding its function's closure and receiver, and the
 * frames of a parse or a validation reach the request being served (its `IncomingMessage`, the
 * response, the context): 3 to 11 KB a cached parse failure, 56 to 75 KB a validation failure.
 */
interface Failure {
  readonly message: string;
  /** Offsets in the document's text of what the error points at (its `locations`). */
  readonly positions: readonly number[] | undefined;
  readonly extensions: Readonly<Record<string, unknown>>;
}

/** What validating a document with a set of rules (by their names) gave: no failure, or some. */
interface Validation {
  readonly rules: string;
  readonly failures: readonly Failure[];
}

type Entry =
  | { readonly document: DocumentNode; readonly validation?: Validation; readonly bytes: number }
  | { readonly failure: Failure; readonly bytes: number };

/**
 * Yoga's parse and validation cache, bounded in bytes, as a plugin (Yoga's own is turned off with
 * `parserAndValidationCache: false`; this plugin goes last, where Yoga puts its own). Yoga's keeps
 * 1,024 documents and parse errors whatever their size, keyed by their whole text, each keeping
 * that text too: a client sending distinct 250 KB documents (one field and a long comment, which
 * no token limit counts) filled 250 MB. It also keeps every document's validation errors as they
 * were thrown, so with their stack traces (see `Failure`). Here an entry is a document with its
 * validation result, or a parse failure, and costs its text plus its tokens and failures' messages;
 * entries larger than `MAX_ENTRY_BYTES` are not kept, and all of them together stay under
 * `MAX_BYTES` (lru-cache's `maxSize`).
 *
 * A failure is answered again with a new error made from its record, through the same hooks as the
 * first time (a failed parse by a parse function that throws it, a failed validation as the
 * result), so that Yoga adds its code and status for the transport at hand, and no request's error
 * is ever another's.
 */
export class ParserCache {
  readonly #entries = new LRUCache<string, Entry>({
    maxSize: MAX_BYTES,
    maxEntrySize: MAX_ENTRY_BYTES,
    sizeCalculation: (entry) => entry.bytes,
  });
  /** Each cached document's text: the key its validation is kept under. */
  readonly #texts = new WeakMap<DocumentNode, string>();
  #rules = '';

  /** The plugin: last in Yoga's list, with `parserAndValidationCache: false`. */
  readonly plugin: Plugin = {
    onParse: ({ params, setParsedDocument, setParseFn }) => {
      const text = params.source.toString();
      const entry = this.#entries.get(text);
      if (entry && 'document' in entry) {
        setParsedDocument(entry.document);
        return;
      }
      if (entry) {
        setParseFn(() => {
          throw errorOf(entry.failure, text);
        });
        return;
      }
      return ({ result }) => {
        if (result instanceof Error) {
          // Parse errors only: anything else thrown while parsing is not the document's fault.
          const failure = failureOf(result);
          if (failure) this.#entries.set(text, { failure, bytes: bytesOf(text, [failure]) });
        } else if (result !== null) {
          this.#texts.set(result, text);
          this.#entries.set(text, { document: result, bytes: bytesOf(text, [], result) });
        }
      };
    },

    onValidate: ({ params: { documentAST, rules }, setResult }) => {
      const text = this.#texts.get(documentAST);
      const entry = text === undefined ? undefined : this.#entries.get(text);
      if (
        text === undefined ||
        !entry ||
        !('document' in entry) ||
        entry.document !== documentAST
      ) {
        return;
      }
      const rulesKey = this.#internRules(
        rules?.map((rule: { name: string }) => rule.name).join(',') ?? '',
      );
      const { validation } = entry;
      if (validation !== undefined && validation.rules === rulesKey) {
        setResult(validation.failures.map((failure) => errorOf(failure, text)));
        return;
      }
      return ({ result }) => {
        const failures = result.map(failureOf);
        if (!failures.every((failure) => failure !== undefined)) return;
        const validation = { rules: rulesKey, failures };
        // A new entry object: lru-cache sizes an entry again only when its value changes.
        this.#entries.set(text, {
          ...entry,
          validation,
          bytes: bytesOf(text, failures, documentAST),
        });
      };
    },
  };

  /**
   * The rules' key, the same string for every entry validated with the same rules (about 600
   * characters, made again for each request).
   */
  #internRules(key: string): string {
    if (key !== this.#rules) this.#rules = key;
    return this.#rules;
  }

  /** Estimated bytes of everything kept: what `MAX_BYTES` bounds (`npm run bench:caches`). */
  get bytes(): number {
    return this.#entries.calculatedSize;
  }

  /** Entries kept. */
  get size(): number {
    return this.#entries.size;
  }
}

/**
 * The record of a parse or validation error, or `undefined` for one this cache does not keep: one
 * caused by something else thrown (`originalError`) or reached while executing (`path`).
 */
function failureOf(error: unknown): Failure | undefined {
  if (!(error instanceof GraphQLError) || error.originalError || error.path) return undefined;
  return {
    message: error.message,
    positions: error.positions && [...error.positions],
    // A copy as it stands when the parse or validation ends: what Yoga adds after (a code, the
    // status) it adds again to each error made from the record.
    extensions: { ...error.extensions },
  };
}

/** A new error from a record: `locations` found again from the positions in the document's text. */
function errorOf({ message, positions, extensions }: Failure, text: string): GraphQLError {
  return new GraphQLError(message, {
    ...(positions ? { source: new Source(text), positions } : {}),
    extensions: { ...extensions },
  });
}

/** An entry's estimated bytes: its text, the document's tokens, and each failure's record. */
function bytesOf(text: string, failures: readonly Failure[], document?: DocumentNode): number {
  let bytes = BYTES_PER_ENTRY + stringBytes(text);
  if (document) bytes += BYTES_PER_DOCUMENT + tokenBytes(document);
  for (const failure of failures) bytes += BYTES_PER_FAILURE + stringBytes(failure.message);
  return bytes;
}

/**
 * What a document's tokens and nodes cost: the parser links every token, comments included, from
 * the document's location, so they live as long as it does.
 */
function tokenBytes(document: DocumentNode): number {
  let tokens = 0;
  for (let token: Token | null | undefined = document.loc?.startToken; token; token = token.next) {
    tokens += 1;
  }
  // Parsed without locations: no tokens kept, about a node per definition and field.
  return (tokens || document.definitions.length * 16) * BYTES_PER_TOKEN;
}
