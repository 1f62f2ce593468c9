// Fails when the committed generated files are not what codegen makes from the operations and the
// schema now, or when a manifest id is not the SHA-256 of its document. Writes nothing: codegen runs
// in memory and its outputs are compared with the files on disk.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { generate, loadContext } from '@graphql-codegen/cli';
import {
  formatManifest,
  packageDir,
  parseManifest,
  presetManifestPath,
  rootManifestPath,
  wrongIds,
} from './manifest.mjs';

process.chdir(packageDir);
const problems = [];
const regenerate = 'run `npm run generate` in examples/typed-client and commit the result';

const context = await loadContext(join(packageDir, 'codegen.ts'));
context.updateConfig({ silent: true });
const outputs = await generate(context, false);

// 1. Every generated file is committed as codegen makes it, and src/gql/ holds nothing else.
const generated = new Map(
  outputs.map((output) => [resolve(packageDir, output.filename), output.content]),
);
for (const [path, content] of generated) {
  const name = relative(packageDir, path);
  if (!existsSync(path)) problems.push(`${name} is missing: ${regenerate}`);
  else if (readFileSync(path, 'utf8') !== content)
    problems.push(`${name} is out of date: ${regenerate}`);
}
const gqlDir = join(packageDir, 'src/gql');
for (const file of existsSync(gqlDir) ? readdirSync(gqlDir) : []) {
  if (!generated.has(join(gqlDir, file)))
    problems.push(`src/gql/${file} is not generated: remove it`);
}

// 2. The preset's manifest: every id is the SHA-256 of its document, and every generated
//    document's `__meta__.hash` (what the client sends) is an id in it.
const presetText = generated.get(presetManifestPath);
if (presetText === undefined) {
  problems.push('codegen wrote no src/gql/persisted-documents.json: is persistedDocuments on?');
} else {
  const manifest = parseManifest(presetText, 'src/gql/persisted-documents.json');
  if (Object.keys(manifest).length === 0) problems.push('the manifest holds no documents');
  problems.push(...wrongIds(manifest, 'src/gql/persisted-documents.json'));
  const sentIds = [
    ...(generated.get(join(gqlDir, 'graphql.ts')) ?? '').matchAll(/"hash":"([^"]+)"/g),
  ].map((match) => match[1]);
  for (const id of sentIds) {
    if (!(id in manifest))
      problems.push(`src/gql/graphql.ts sends ${id}, which the manifest lacks`);
  }
  if (sentIds.length !== Object.keys(manifest).length) {
    problems.push(
      `src/gql/graphql.ts has ${sentIds.length} documents, the manifest ${Object.keys(manifest).length}`,
    );
  }

  // 3. The root manifest is the preset's, sorted, and its ids check out on their own.
  if (!existsSync(rootManifestPath)) {
    problems.push(`persisted-documents.json is missing at the repository root: ${regenerate}`);
  } else {
    const rootText = readFileSync(rootManifestPath, 'utf8');
    problems.push(
      ...wrongIds(parseManifest(rootText, 'persisted-documents.json'), 'persisted-documents.json'),
    );
    if (rootText !== formatManifest(manifest)) {
      problems.push(`persisted-documents.json (repository root) is out of date: ${regenerate}`);
    }
  }
  if (problems.length === 0) {
    console.log(
      `Persisted documents up to date: ${Object.keys(manifest).length} documents, ids verified.`,
    );
  }
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
