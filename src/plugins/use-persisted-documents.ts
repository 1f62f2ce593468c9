import type { Plugin } from 'graphql-yoga';
import { refusal } from '../errors/refusal.js';
import { DOCUMENT_ID, documentIdOf } from '../persisted-documents/manifest.js';
import { registeredDocuments } from '../persisted-documents/registered-documents.js';

export interface PersistedDocumentsOptions {
  /** Documents clients may name by id: the manifest (`readManifest`). */
  readonly manifest: ReadonlyMap<string, string>;
  /**
   * Refuse every operation that is not in the manifest, whether sent as text, by `documentId` or
   * registered through APQ.
   * @default false
   */
  readonly only?: boolean;
}

/**
 * Bytes of documents registered through APQ kept at most (least recently used first), each
 * counted with its entry's overhead (see `registeredDocuments`).
 */
const MAX_REGISTERED_BYTES = 4 * 1024 * 1024;

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
 *   the text with the hash, which registers it (in memory, bounded) once it has parsed and passed
 *   validation, limits included: a text that would be refused is never kept.
 * With `only`, anything that is not a manifest document is refused with `PERSISTED_DOCUMENT_REQUIRED`
 * (a text is accepted when it is exactly a manifest document).
 * It runs in Yoga's `onParams`, which every transport goes through: HTTP GET and POST, SSE, and
 * graphql-ws (see `createGraphQLWebSocketServer`).
 */
export function usePersistedDocuments(options: PersistedDocumentsOptions): Plugin {
  const { manifest, only = false } = options;
  const registered = registeredDocuments(MAX_REGISTERED_BYTES);
  /** Texts sent with an unknown hash, by their request's context: registered once valid. */
  const toRegister = new WeakMap<object, string>();

  return {
    onValidate({ context }) {
      const hash = toRegister.get(context);
      if (hash === undefined) return;
      toRegister.delete(context);
      return ({ valid }) => {
        const text = (context as { params?: { query?: unknown } }).params?.query;
        if (valid && typeof text === 'string') registered.set(hash, text);
      };
    },
    onParams({ params, setParams, context }) {
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
        // Kept only once it parses and validates (`onValidate`): nothing is stored before then.
        if (known === undefined) toRegister.set(context, hash);
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
