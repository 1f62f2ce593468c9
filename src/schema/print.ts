import { printSchema } from 'graphql';
import { schema } from './index.js';

/** The schema as committed in `schema.graphql`, in the order the code declares it. */
export function printSchemaDocument(): string {
  return `${printSchema(schema)}\n`;
}
