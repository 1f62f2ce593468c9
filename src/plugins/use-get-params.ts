import type { Plugin } from 'graphql-yoga';
import { refusal } from '../errors/refusal.js';

/**
 * Reads a GET request's `query`, `documentId`, `operationName`, `variables` and `extensions`
 * (`documentId` names a persisted document, see `usePersistedDocuments`), answering 400 with
 * the parameter named when `variables` or `extensions` is not a JSON object. (Yoga's own GET
 * parser lets the JSON error escape, which clients see as a 500.)
 */
export function useGetParams(): Plugin {
  return {
    onRequestParse({ request, url, setRequestParser }) {
      if (request.method !== 'GET') return;
      setRequestParser(() => {
        const search = url.searchParams;
        return {
          query: search.get('query') ?? undefined,
          documentId: search.get('documentId') ?? undefined,
          operationName: search.get('operationName') ?? undefined,
          variables: jsonObject(search.get('variables'), 'variables'),
          extensions: jsonObject(search.get('extensions'), 'extensions'),
        };
      });
    },
  };
}

function jsonObject(text: string | null, name: string): Record<string, unknown> | undefined {
  if (text === null || text === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest(`The "${name}" parameter is not valid JSON.`);
  }
  if (value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest(`The "${name}" parameter must be a JSON object.`);
  }
  return value as Record<string, unknown>;
}

const badRequest = (message: string) => refusal('BAD_REQUEST', message, 400);
