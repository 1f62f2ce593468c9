/**
 * Writes the files generated from the code: `schema.graphql`, the subgraph SDL, and
 * `supergraph.graphql`, that subgraph composed for the compose stack's Hive Gateway (which reaches
 * this gateway at `SUBGRAPH_URL`, default `http://gateway:4000/graphql`).
 *
 * With `--check`, writes nothing and fails when a committed file differs from what the code
 * prints, so a schema change never goes unreviewed.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { printSchemaDocument } from '../src/schema/print.js';

const DEFAULT_SUBGRAPH_URL = 'http://gateway:4000/graphql';
const check = process.argv.includes('--check');

const subgraph = printSchemaDocument();
const url = check ? DEFAULT_SUBGRAPH_URL : (process.env.SUBGRAPH_URL ?? DEFAULT_SUBGRAPH_URL);
const composed = composeServices([{ name: 'ledger-status', url, typeDefs: parse(subgraph) }]);
if (composed.errors) {
  console.error('The subgraph does not compose:');
  for (const error of composed.errors) console.error(`  - ${error.message}`);
  process.exit(1);
}

const files = [
  { name: 'schema.graphql', text: subgraph, command: 'npm run schema:print' },
  { name: 'supergraph.graphql', text: composed.supergraphSdl, command: 'npm run supergraph' },
];

let stale = false;
for (const { name, text, command } of files) {
  const target = new URL(`../${name}`, import.meta.url);
  if (!check) {
    await writeFile(target, text);
    console.log(`Wrote ${name}.`);
    continue;
  }
  const committed = await readFile(target, 'utf8').catch(() => '');
  if (committed !== text) {
    console.error(`${name} is stale: run \`${command}\` and commit the result.`);
    stale = true;
  }
}
if (check && !stale) console.log('schema.graphql and supergraph.graphql are up to date.');
process.exit(stale ? 1 : 0);
