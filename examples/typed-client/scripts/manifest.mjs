// The persisted documents manifest: id → document text, where id is `sha256:` and the hex SHA-256 of
// the text (the form the client preset emits). `node scripts/manifest.mjs write` copies the preset's
// src/gql/persisted-documents.json to the repository root, keys sorted, after checking every id.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
export const presetManifestPath = join(packageDir, 'src/gql/persisted-documents.json');
export const rootManifestPath = join(packageDir, '../../persisted-documents.json');

/** The id of a document: `sha256:` and the hex SHA-256 of its UTF-8 text. */
export function documentId(text) {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/** Parses a manifest's JSON text, refusing anything but an object of strings. */
export function parseManifest(text, name) {
  const manifest = JSON.parse(text);
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) {
    throw new Error(`${name}: not a JSON object`);
  }
  for (const [id, document] of Object.entries(manifest)) {
    if (typeof document !== 'string') throw new Error(`${name}: ${id} is not a string`);
  }
  return manifest;
}

/** The ids that are not the SHA-256 of their document, as messages. */
export function wrongIds(manifest, name) {
  return Object.entries(manifest)
    .filter(([id, document]) => id !== documentId(document))
    .map(
      ([id, document]) => `${name}: ${id} is not the id of its document (${documentId(document)})`,
    );
}

/** The root manifest's text: keys sorted, two-space indent, a trailing newline. */
export function formatManifest(manifest) {
  const sorted = Object.fromEntries(
    Object.keys(manifest)
      .sort()
      .map((id) => [id, manifest[id]]),
  );
  return `${JSON.stringify(sorted, null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command] = process.argv.slice(2);
  if (command !== 'write') {
    console.error('usage: node scripts/manifest.mjs write');
    process.exit(2);
  }
  const manifest = parseManifest(
    readFileSync(presetManifestPath, 'utf8'),
    'src/gql/persisted-documents.json',
  );
  const problems = wrongIds(manifest, 'src/gql/persisted-documents.json');
  if (problems.length > 0) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
  writeFileSync(rootManifestPath, formatManifest(manifest));
  console.log(
    `Wrote ${relative(process.cwd(), rootManifestPath)}: ${Object.keys(manifest).length} persisted documents`,
  );
}
