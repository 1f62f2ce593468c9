import type { DocumentNode, GraphQLError, Token } from 'graphql';
import { LRUCache } from 'lru-cache';

/**
 * Estimated bytes of documents and parse errors kept at most, their text counted; the least
 * recently used go first.
 */
const MAX_BYTES = 16 * 1024 * 1024;
/**
 * Estimated bytes of the largest document kept: larger ones are parsed each time they come. A
 * document at `MAX_TOKENS` (2,000) is about 800 KB; the page tree (90 tokens), 37 KB.
 */
const MAX_ENTRY_BYTES = 1024 * 1024;

/**
 * What V8 spends on a token and the AST node and location it makes: 310 bytes measured on
 * graphql 16 and node 24, rounded up.
 */
const BYTES_PER_TOKEN = 400;
/** The entry, its slots in the cache, and a parse error's own fields. */
const BYTES_PER_ENTRY = 1_024;

/**
 * Yoga's parse cache (`parserAndValidationCache`), bounded in bytes. Yoga's own keeps 1,024
 * documents and parse errors whatever their size, keyed by their whole text, and each keeps that
 * text too (`loc.source`, the error's `source`): a client sending distinct 250 KB documents (one
 * field and a long comment, which no token limit counts) filled 250 MB. Here an entry costs its
 * text plus its tokens, entries larger than `MAX_ENTRY_BYTES` are not kept, and all of them together
 * stay under `MAX_BYTES` (lru-cache's `maxSize`). Validation results stay in Yoga's cache, which is
 * keyed weakly by the document and so goes with it.
 */
export class ParserCache {
  readonly #entries = new LRUCache<string, DocumentNode | GraphQLError>({
    maxSize: MAX_BYTES,
    maxEntrySize: MAX_ENTRY_BYTES,
    sizeCalculation: (value, text) =>
      BYTES_PER_ENTRY +
      stringBytes(text) +
      (value instanceof Error ? stringBytes(value.message) : tokenBytes(value)),
  });

  /** Parsed documents, by their text: Yoga's `documentCache`. */
  readonly documentCache = {
    get: (text: string): DocumentNode | undefined => {
      const value = this.#entries.get(text);
      return value instanceof Error ? undefined : value;
    },
    set: (text: string, document: DocumentNode): void => {
      this.#entries.set(text, document);
    },
  };

  /** Documents that failed to parse, by their text, with their error: Yoga's `errorCache`. */
  readonly errorCache = {
    get: (text: string): unknown => {
      const value = this.#entries.get(text);
      return value instanceof Error ? value : undefined;
    },
    set: (text: string, error: unknown): void => {
      // Parse errors only: anything else thrown while parsing is not the document's fault.
      if (error instanceof Error && 'locations' in error) {
        this.#entries.set(text, error as GraphQLError);
      }
    },
  };
}

/** A string's bytes in V8: one a character, two once any is outside Latin-1. */
function stringBytes(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the Latin-1 range, on purpose
  return /[^\u0000-\u00ff]/.test(text) ? text.length * 2 : text.length;
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
