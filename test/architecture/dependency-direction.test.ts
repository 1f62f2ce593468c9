import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The layers of src/, innermost first, as docs/architecture.md draws them. A module may import its
 * own layer and the layers inside it, never one outside: the status core knows nothing of the
 * app; adapters (the upstream clients, the schema, the transports) point inward.
 */
const LAYERS: readonly (readonly [layer: string, paths: readonly string[]])[] = [
  ['core', ['core/']],
  ['providers', ['providers/']],
  [
    'foundation',
    ['config.ts', 'config/', 'read-body-text.ts', 'json-budget.ts', 'errors/', 'observability/'],
  ],
  ['redis', ['redis/']],
  ['upstreams', ['upstreams/']],
  ['subscriptions', ['subscriptions/']],
  ['metrics', ['metrics/']],
  ['cluster', ['cluster/']],
  ['schema', ['schema/', 'persisted-documents/']],
  ['plugins', ['plugins/']],
  ['http', ['http/']],
  ['composition', ['gateway.ts', 'main.ts']],
];

const SRC = join(import.meta.dirname, '../../src');

function layerOf(file: string): number {
  const path = relative(SRC, file);
  const index = LAYERS.findIndex(([, paths]) =>
    paths.some((prefix) => (prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix)),
  );
  if (index === -1) throw new Error(`${path} is in no layer: add it to LAYERS`);
  return index;
}

function* sourceFiles(directory: string): Generator<string> {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

/** Every relative import of a file (static, type-only and dynamic), as the file it names. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map(([, spec]) =>
    normalize(join(dirname(file), (spec as string).replace(/\.js$/, '.ts'))),
  );
}

const edges = [...sourceFiles(SRC)].flatMap((file) =>
  importsOf(file).map((target) => ({ file, target })),
);

describe('the dependencies of src/', () => {
  it('point inward: no module imports a layer outside its own', () => {
    const outward = edges
      .filter(({ file, target }) => layerOf(target) > layerOf(file))
      .map(
        ({ file, target }) =>
          `${relative(SRC, file)} (${LAYERS[layerOf(file)]?.[0]}) imports ${relative(SRC, target)} (${LAYERS[layerOf(target)]?.[0]})`,
      );
    expect(outward).toEqual([]);
  });

  it('never go both ways between two folders of one layer', () => {
    // Within a layer any import is allowed, so a cycle between two of its folders (as http/ and
    // http/response-cache/ had) is seen here only.
    const folderOf = (file: string) => relative(SRC, dirname(file)) || '.';
    const between = edges
      .filter(({ file, target }) => layerOf(file) === layerOf(target))
      .map(({ file, target }) => [folderOf(file), folderOf(target)] as const)
      .filter(([from, to]) => from !== to);
    expect(between.length).toBeGreaterThan(0);
    const oneWay = new Set(between.map(([from, to]) => `${from} → ${to}`));
    expect(
      [...oneWay].filter((edge) => oneWay.has(edge.split(' → ').reverse().join(' → '))),
    ).toEqual([]);
  });

  it('leave the status core importing nothing of the app but itself', () => {
    const core = edges.filter(({ file }) => relative(SRC, file).startsWith('core/'));
    expect(core.length).toBeGreaterThan(0);
    expect(
      core
        .filter(({ target }) => !relative(SRC, target).startsWith('core/'))
        .map(({ file, target }) => `${relative(SRC, file)} imports ${relative(SRC, target)}`),
    ).toEqual([]);
  });

  it('name only files that exist', () => {
    const files = new Set(sourceFiles(SRC));
    expect(edges.filter(({ target }) => !files.has(target)).map(({ target }) => target)).toEqual(
      [],
    );
  });
});
