/**
 * `npm run generate`: writes the files generated from the code: `schema.graphql`, the subgraph
 * SDL; `supergraph.graphql`, that subgraph composed for the compose stack's Hive Gateway (which
 * reaches this gateway at `SUBGRAPH_URL`, default `http://gateway:4000/graphql`); and
 * `docs/configuration.md`, from the variables `src/config.ts` defines; and the error-code table of
 * `docs/api.md`, from `src/errors/error-code.ts`.
 *
 * With `--check` (run by `npm test`), writes nothing and fails when a committed file differs from
 * what the code prints, so neither the schema nor the configuration's documentation can drift.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { CONFIG_VARIABLES, type ConfigVariable } from '../src/config.js';
import { ERROR_CODES } from '../src/errors/error-code.js';
import { printSchemaDocument } from '../src/schema/print.js';

const DEFAULT_SUBGRAPH_URL = 'http://gateway:4000/graphql';
/** Where the error-code table of docs/api.md starts and ends. */
const ERROR_TABLE_START =
  '<!-- error codes: generated from src/errors/error-code.ts by `npm run generate` -->';
const ERROR_TABLE_END = '<!-- end of error codes -->';
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
  { name: 'schema.graphql', text: subgraph },
  { name: 'supergraph.graphql', text: composed.supergraphSdl },
  { name: 'docs/configuration.md', text: configurationDoc() },
  { name: 'docs/api.md', text: withErrorCodeTable(await readText('docs/api.md')) },
];

let stale = false;
for (const { name, text } of files) {
  const target = new URL(`../${name}`, import.meta.url);
  if (!check) {
    await writeFile(target, text);
    console.log(`Wrote ${name}.`);
    continue;
  }
  const committed = await readText(name);
  if (committed !== text) {
    console.error(`${name} is stale: run \`npm run generate\` and commit the result.`);
    stale = true;
  }
}
if (check && !stale) console.log(`${files.map(({ name }) => name).join(', ')} are up to date.`);
process.exit(stale ? 1 : 0);

/** A committed file's text, or empty when there is none. */
function readText(name: string): Promise<string> {
  return readFile(new URL(`../${name}`, import.meta.url), 'utf8').catch(() => '');
}

/** `text` with the table between the error-code markers printed from `ERROR_CODES`. */
function withErrorCodeTable(text: string): string {
  const start = text.indexOf(ERROR_TABLE_START);
  const end = text.indexOf(ERROR_TABLE_END);
  if (start === -1 || end < start) {
    throw new Error(`docs/api.md has no "${ERROR_TABLE_START}" … "${ERROR_TABLE_END}" region`);
  }
  const rows = Object.entries(ERROR_CODES).map(
    ([code, meaning]) => `| \`${code}\` | ${meaning.replaceAll('|', '\\|')} |`,
  );
  const table = ['| Code | Meaning |', '| --- | --- |', ...rows].join('\n');
  return `${text.slice(0, start)}${ERROR_TABLE_START}\n\n${table}\n\n${text.slice(end)}`;
}

/** The operator's reference, one table per section, in the order `CONFIG_VARIABLES` lists them. */
function configurationDoc(): string {
  const sections = new Map<string, [string, ConfigVariable][]>();
  for (const entry of Object.entries(CONFIG_VARIABLES) as [string, ConfigVariable][]) {
    const section = sections.get(entry[1].section) ?? [];
    section.push(entry);
    sections.set(entry[1].section, section);
  }
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated from src/config.ts by `npm run generate`; `npm test` fails when it is stale. -->',
    '',
    'The gateway reads its configuration from environment variables once, at start-up. Every problem is reported together, each naming its variable, and the process exits 1. Empty values count as unset.',
    '',
  ];
  for (const [section, variables] of sections) {
    lines.push(`## ${section}`, '', '| Variable | Default | Meaning |', '| --- | --- | --- |');
    for (const [name, variable] of variables) {
      const fallback =
        variable.default !== undefined
          ? variable.default === ''
            ? '(empty)'
            : `\`${variable.default}\``
          : (variable.unset ?? 'required');
      lines.push(`| \`${name}\` | ${cell(fallback)} | ${cell(variable.description)} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
