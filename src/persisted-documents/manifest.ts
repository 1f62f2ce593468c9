import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'graphql';

/**
 * A persisted document's id as graphql-codegen's client preset writes it and GraphQL over HTTP's
 * persisted documents appendix prefixes it: `sha256:` and the lowercase hex SHA-256 of the
 * document's UTF-8 text.
 */
export const DOCUMENT_ID = /^sha256:[0-9a-f]{64}$/;

/** The id of a document text. */
export const documentIdOf = (text: string): string =>
  `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

/** The manifest of the repository (and of the image): `persisted-documents.json` beside package.json. */
export const DEFAULT_MANIFEST = fileURLToPath(
  new URL('../../persisted-documents.json', import.meta.url),
);

/** The manifest cannot be used; `problems` lists every reason. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';

  constructor(file: string, problems: readonly string[]) {
    super(
      `The persisted documents manifest ${file} is not usable:\n  - ${problems.join('\n  - ')}`,
    );
  }
}

/**
 * Reads a persisted documents manifest: a JSON object from id to document text, every id the hash
 * of its text and every text a GraphQL document (`examples/typed-client` generates it). Read once
 * at start-up; every problem is reported together.
 */
export function readManifest(file: string): ReadonlyMap<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ManifestError(file, [(error as Error).message]);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new ManifestError(file, ['it is not a JSON object from document id to document']);
  }
  const documents = new Map<string, string>();
  const problems: string[] = [];
  for (const [id, text] of Object.entries(json)) {
    if (typeof text !== 'string') problems.push(`${id} is not a document text`);
    else if (!DOCUMENT_ID.test(id)) problems.push(`${id} is not a sha256:<hex> id`);
    else if (documentIdOf(text) !== id) problems.push(`${id} is not the hash of its document`);
    else {
      try {
        parse(text);
        documents.set(id, text);
      } catch (error) {
        problems.push(`${id} does not parse: ${(error as Error).message}`);
      }
    }
  }
  if (problems.length > 0) throw new ManifestError(file, problems);
  return documents;
}

/** `manifest` with `texts` added under their ids: documents the gateway itself sends. */
export function withDocuments(
  manifest: ReadonlyMap<string, string>,
  texts: readonly string[],
): ReadonlyMap<string, string> {
  return new Map([...manifest, ...texts.map((text) => [documentIdOf(text), text] as const)]);
}
