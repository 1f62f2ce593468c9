/**
 * A small typed GraphQL client that sends persisted document ids only, never document text.
 *
 * The client preset (codegen.ts, `persistedDocuments.mode: 'replaceDocumentWithHash'`) turns each
 * `graphql()` document into `{ __meta__: { hash, operationType, operationName } }` typed as a
 * `TypedDocumentNode<Result, Variables>`. `hash` is the document's id in the manifest
 * (`sha256:<hex>`), sent as `documentId` as in GraphQL over HTTP's persisted documents appendix:
 *
 * - POST `{ "documentId": "sha256:…", "variables": { … } }` as JSON (any operation), or
 * - GET `?documentId=sha256:…&variables={…}` (queries only).
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';

/** What the client preset puts on each generated document (see codegen.ts). */
export interface PersistedDocumentMeta {
  /** The document's id in persisted-documents.json: `sha256:` and the hex SHA-256 of its text. */
  hash: string;
  operationType: 'query' | 'mutation' | 'subscription';
  operationName: string | null;
}

/** A GraphQL error as the gateway serializes it; `extensions.code` is one of docs/api.md's codes. */
export interface GraphQLErrorJson {
  message: string;
  locations?: ReadonlyArray<{ line: number; column: number }>;
  path?: ReadonlyArray<string | number>;
  extensions?: { code?: string; [key: string]: unknown };
}

/** The result of one operation, typed by its document. */
export interface ExecutionResult<TData> {
  data?: TData | null;
  errors?: ReadonlyArray<GraphQLErrorJson>;
  extensions?: Record<string, unknown>;
}

/** The gateway answered something that is not a GraphQL response (e.g. a proxy's HTML page). */
export class GatewayHttpError extends Error {
  override readonly name = 'GatewayHttpError';
  readonly status: number;
  readonly body: string;

  constructor(status: number, body: string) {
    super(`The gateway answered HTTP ${status} without a GraphQL response: ${body.slice(0, 200)}`);
    this.status = status;
    this.body = body;
  }
}

export interface ClientOptions {
  /** The GraphQL endpoint, e.g. `http://localhost:4000/graphql`. */
  url: string | URL;
  /** How queries are sent; mutations are always POSTed. Default `POST`. */
  queryMethod?: 'GET' | 'POST';
  /** Extra request headers, e.g. `authorization`. */
  headers?: Record<string, string>;
  /** `include` from a browser on another origin, so that the `verify_session` cookie travels. */
  credentials?: RequestCredentials;
  /** A fetch implementation; the global one by default. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  /** Overrides the client's `queryMethod` for this request (a mutation is POSTed regardless). */
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Variables are optional for an operation that declares none, required otherwise. */
export type ExecuteArgs<TVariables> =
  TVariables extends Record<string, never>
    ? [variables?: TVariables, options?: RequestOptions]
    : [variables: TVariables, options?: RequestOptions];

/** The persisted document metadata of a generated document. */
export function documentMeta(document: object): PersistedDocumentMeta {
  const meta = (document as { __meta__?: Partial<PersistedDocumentMeta> }).__meta__;
  if (typeof meta?.hash !== 'string' || meta.operationType === undefined) {
    throw new TypeError(
      'Not a persisted document: use a document from graphql() in src/gql/ (run `npm run generate`).',
    );
  }
  return {
    hash: meta.hash,
    operationType: meta.operationType,
    operationName: meta.operationName ?? null,
  };
}

/** The id a client sends for a generated document (`sha256:<hex>`), as in the manifest. */
export function documentId(document: object): string {
  return documentMeta(document).hash;
}

export function createClient(options: ClientOptions) {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const endpoint = new URL(options.url);

  async function execute<TData, TVariables>(
    document: TypedDocumentNode<TData, TVariables>,
    ...[variables, requestOptions]: ExecuteArgs<TVariables>
  ): Promise<ExecutionResult<TData>> {
    const meta = documentMeta(document);
    const method =
      meta.operationType === 'query'
        ? (requestOptions?.method ?? options.queryMethod ?? 'POST')
        : 'POST';
    const hasVariables =
      typeof variables === 'object' && variables !== null && Object.keys(variables).length > 0;
    const headers: Record<string, string> = {
      accept: 'application/graphql-response+json, application/json;q=0.9',
      ...options.headers,
      ...requestOptions?.headers,
    };

    let url = endpoint;
    let body: string | undefined;
    if (method === 'GET') {
      url = new URL(endpoint);
      url.searchParams.set('documentId', meta.hash);
      if (hasVariables) url.searchParams.set('variables', JSON.stringify(variables));
    } else {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(
        hasVariables ? { documentId: meta.hash, variables } : { documentId: meta.hash },
      );
    }

    const response = await fetchImpl(url, {
      method,
      headers,
      body,
      credentials: options.credentials,
      signal: requestOptions?.signal,
    });
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? '';
    if (!/\bjson\b/.test(contentType)) throw new GatewayHttpError(response.status, text);
    let result: unknown;
    try {
      result = JSON.parse(text);
    } catch {
      throw new GatewayHttpError(response.status, text);
    }
    if (
      typeof result !== 'object' ||
      result === null ||
      !('data' in result || 'errors' in result)
    ) {
      throw new GatewayHttpError(response.status, text);
    }
    return result as ExecutionResult<TData>;
  }

  return { execute };
}

export type Client = ReturnType<typeof createClient>;
