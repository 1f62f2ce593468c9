/**
 * Prints the schema built from code to `schema.graphql`. With `--check`, writes nothing and fails
 * when the committed file differs, so a schema change never goes unreviewed.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { printSchemaDocument } from '../src/schema/print.js';

const target = new URL('../schema.graphql', import.meta.url);
const printed = printSchemaDocument();

if (process.argv.includes('--check')) {
  const committed = await readFile(target, 'utf8').catch(() => '');
  if (committed !== printed) {
    console.error('schema.graphql is stale: run `npm run schema:print` and commit the result.');
    process.exit(1);
  }
  console.log('schema.graphql is up to date.');
} else {
  await writeFile(target, printed);
  console.log('Wrote schema.graphql.');
}
