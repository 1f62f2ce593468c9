import { printSubgraphSchema } from '@apollo/subgraph';
import { schema } from './index.js';

/**
 * The subgraph SDL, as committed in `schema.graphql` and served by `_service { sdl }`: the public
 * schema plus the federation directives (`@link`, `@key`) a composer needs.
 */
export function printSchemaDocument(): string {
  return `${printSubgraphSchema(schema)}\n`;
}
