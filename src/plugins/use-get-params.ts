import type { Plugin } from 'graphql-yoga';
import { refusal } from '../errors/refusal.js';
import { type JsonBudget, JsonBudgetExceeded, parseJsonWithin } from '../json-budget.js';

/**
 * Reads a GET request's `query`, `documentId`, `operationName`, `variables` and `extensions`
 * (`documentId` names a persisted document, see `usePersistedDocuments`), answering 400 with
 * the parameter named when `variables` or `extensions` is not a JSON object. (Yoga's own GET
 * parser lets the JSON error escape, which clients see as a 500.) Their JSON is parsed within
 * `json`, as a request body is.
 */
export function useGetParams(json: JsonBudget): Plugin {
  return {
    onRequestParse({ request, url, setRequestParser }) {
      if (request.method !== 'GET') return;
      setRequestParser(() => {
        const search = url.searchParams;
        return {
          query: search.get('query') ?? undefined,
          documentId: search.get('documentId') ?? undefined,
          operationName: search.get('operationName') ?? undefined,
          variables: jsonObject(search.get('variables'), 'variables', json),
          extensions: jsonObject(search.get('extensions'), 'extensions', json),
        };
      });
    },
  };
}

function jsonObject(
  text: string | null,
  name: string,
  json: JsonBudget,
): Record<string, unknown> | undefined {
  if (text === null || text === '') return undefined;
  let value: unknown;
  try {
    value = parseJsonWithin(text, json);
  } catch (error) {
    if (error instanceof JsonBudgetExceeded) {
      throw refusal(
        'JSON_TOO_COMPLEX',
        `The "${name}" parameter was refused unparsed. ${error.message}`,
        413,
        {
          limit: error.limit,
        },
      );
    }
    throw badRequest(`The "${name}" parameter is not valid JSON.`);
  }
  if (value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest(`The "${name}" parameter must be a JSON object.`);
  }
  return value as Record<string, unknown>;
}

const badRequest = (message: string) => refusal('BAD_REQUEST', message, 400);
