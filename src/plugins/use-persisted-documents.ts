import type { Plugin } from 'graphql-yoga';
import { refusal } from '../errors/refusal.js';
import { DOCUMENT_ID, documentIdOf } from '../persisted-documents/manifest.js';

export interface PersistedDocumentsOptions {
  /** Documents clients may name by id: the manifest (`readManifest`). */
  readonly manifest: ReadonlyMap<string, string>;
  /**
   * Refuse every operation that is not in the manifest, whether sent as text, by `documentId` or
   * registered through APQ.
   * @default false
   */
  readonly only?: boolean;
  /**
   * Characters of document text registered through APQ kept at most (least recently used first).
   * @default 4194304 (4 MiB)
   */
  readonly maxRegisteredChars?: number;
}

/** What Apollo's clients match to send the document text again (APQ's register step). */
const NOT_FOUND_MESSAGE = 'PersistedQueryNotFound';
const HASH = /^[0-9a-f]{64}$/;

/**
 * Operations named by id instead of sent as text, in the two forms clients use:
 * - GraphQL over HTTP's `documentId` (POST body or GET parameter), an id of the manifest, as
 *   graphql-codegen's client preset sends it;
 * - Apollo's automatic persisted queries: `extensions.persistedQuery.sha256Hash`, the hex SHA-256
 *   of the text. An id of the manifest or one registered before runs its document; an unknown one
 *   answers `PERSISTED_QUERY_NOT_FOUND` with the message Apollo's clients look for, and they send
 *   the text with the hash, which registers it (in memory, bounded).
 * With `only`, anything that is not a manifest document is refused with `PERSISTED_DOCUMENT_REQUIRED`
 * (a text is accepted when it is exactly a manifest document).
 */
export function usePersistedDocuments(options: PersistedDocumentsOptions): Plugin {
  const { manifest, only = false } = options;
  const registered = new RegisteredDocuments(options.maxRegisteredChars ?? 4 * 1024 * 1024);

  return {
    onParams({ params, setParams }) {
      const { documentId, query, extensions } = params as typeof params & {
        documentId?: unknown;
      };
      if (documentId !== undefined) {
        if (typeof documentId !== 'string' || !DOCUMENT_ID.test(documentId)) {
          throw invalid('"documentId" must be "sha256:" and 64 lowercase hex digits.');
        }
        if (query !== undefined) throw invalid('Send either "documentId" or "query", not both.');
        const text = manifest.get(documentId);
        if (text === undefined) {
          throw notFound(`No persisted document has the id ${documentId}.`);
        }
        setParams({ ...params, query: text });
        return;
      }

      const persistedQuery = (extensions as { persistedQuery?: unknown } | undefined)
        ?.persistedQuery;
      if (persistedQuery !== undefined) {
        const { version, sha256Hash: hash } = (persistedQuery ?? {}) as Record<string, unknown>;
        if (version !== 1 || typeof hash !== 'string' || !HASH.test(hash)) {
          throw invalid(
            '"extensions.persistedQuery" must be { "version": 1, "sha256Hash": <64 lowercase hex digits> }.',
          );
        }
        const id = `sha256:${hash}`;
        const known = manifest.get(id) ?? (only ? undefined : registered.get(hash));
        if (query === undefined || query === null) {
          if (known === undefined) throw notFound(NOT_FOUND_MESSAGE);
          setParams({ ...params, query: known });
          return;
        }
        if (typeof query !== 'string' || documentIdOf(query) !== id) {
          throw invalid('"extensions.persistedQuery.sha256Hash" is not the hash of "query".');
        }
        if (only && known === undefined) throw required();
        if (known === undefined) registered.set(hash, query);
        return;
      }

      if (only && (typeof query !== 'string' || !manifest.has(documentIdOf(query)))) {
        throw required();
      }
    },
  };
}

const invalid = (message: string) => refusal('BAD_REQUEST', message, 400);
const notFound = (message: string) => refusal('PERSISTED_QUERY_NOT_FOUND', message, 404);
const required = () =>
  refusal(
    'PERSISTED_DOCUMENT_REQUIRED',
    'This gateway runs persisted documents only: send the "documentId" of a document in its manifest.',
    400,
  );

/** APQ's registered documents, by hash: the least recently used go past `maxChars`. */
class RegisteredDocuments {
  readonly #documents = new Map<string, string>();
  readonly #maxChars: number;
  #chars = 0;

  constructor(maxChars: number) {
    this.#maxChars = maxChars;
  }

  get(hash: string): string | undefined {
    const text = this.#documents.get(hash);
    if (text !== undefined) {
      this.#documents.delete(hash);
      this.#documents.set(hash, text);
    }
    return text;
  }

  set(hash: string, text: string): void {
    if (text.length > this.#maxChars) return;
    this.#documents.set(hash, text);
    this.#chars += text.length;
    for (const [oldest, old] of this.#documents) {
      if (this.#chars <= this.#maxChars) break;
      this.#documents.delete(oldest);
      this.#chars -= old.length;
    }
  }
}
