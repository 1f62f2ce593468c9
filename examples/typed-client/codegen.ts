import type { CodegenConfig } from '@graphql-codegen/cli';
import type { DocumentNode, OperationDefinitionNode } from 'graphql';

/**
 * graphql-codegen's client preset: typed `graphql()` for the operations in src/, and the persisted
 * documents manifest (`src/gql/persisted-documents.json`, id → document) that `npm run generate`
 * copies to the repository root for the gateway.
 */
const config: CodegenConfig = {
  // The gateway's generated subgraph SDL (`npm run generate` at the root writes it).
  schema: '../../schema.graphql',
  // The operations here, and the gateway's page tree (GraphiQL's opening query), so that the
  // manifest holds exactly the query the gateway shows.
  documents: ['src/**/*.ts', '!src/gql/**/*', '../../src/http/page-tree-query.ts'],
  ignoreNoDocuments: false,
  generates: {
    './src/gql/': {
      preset: 'client',
      presetConfig: {
        fragmentMasking: false,
        persistedDocuments: {
          // Ids are `sha256:<hex of the printed document>` (the GraphQL-over-HTTP form).
          hashAlgorithm: 'sha256',
          // The client sends ids only, so the bundle needs no document text: each generated
          // document is just its `__meta__`.
          mode: 'replaceDocumentWithHash',
        },
        // Also record the operation's kind and name beside the hash, so the client can send
        // queries as GET and mutations as POST without the document text.
        onExecutableDocumentNode: (document: DocumentNode) => {
          const operation = document.definitions.find(
            (definition): definition is OperationDefinitionNode =>
              definition.kind === 'OperationDefinition',
          );
          return operation
            ? { operationType: operation.operation, operationName: operation.name?.value ?? null }
            : undefined;
        },
      },
      config: {
        // Plain `import type` and `.ts` specifiers: the generated files run under
        // `node --experimental-strip-types` as they are.
        useTypeImports: true,
        importExtension: '.ts',
        enumsAsTypes: true,
        strictScalars: true,
        scalars: {
          DateTime: 'string',
          LocalDate: 'string',
          URL: 'string',
          JSON: 'unknown',
        },
      },
    },
  },
};

export default config;
