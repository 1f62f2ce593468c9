/**
 * The simulator is a part of the repository, not of the gateway: neither imports the other, and no
 * name is exported by both (a test or benchmark importing from both never has to guess which one
 * it holds).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SIMULATOR = join(ROOT, 'simulator');
const GATEWAY = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.[cm]?ts$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Every module a file imports or re-exports from (static and dynamic). */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = [
    ...text.matchAll(/\bfrom\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/\bimport\s*\(?\s*['"]([^'"]+)['"]/g),
  ];
  return found.map((match) => match[1] ?? '');
}

const inside = (path: string, dir: string) => path === dir || path.startsWith(`${dir}${sep}`);

/** Relative imports of the files under `from` that land under `into`, as `file → specifier`. */
function importsInto(from: string, into: string): string[] {
  return sourceFiles(from).flatMap((file) =>
    specifiers(file)
      .filter((specifier) => specifier.startsWith('.'))
      .filter((specifier) => inside(resolve(dirname(file), specifier), into))
      .map((specifier) => `${relative(ROOT, file)} → ${specifier}`),
  );
}

/** The names a tree of modules exports, each with the files exporting it. */
function exportedNames(dir: string): Map<string, string[]> {
  const names = new Map<string, string[]>();
  const add = (name: string, file: string) => {
    names.set(name, [...(names.get(name) ?? []), relative(ROOT, file)]);
  };
  for (const file of sourceFiles(dir)) {
    const text = readFileSync(file, 'utf8');
    const declarations = text.matchAll(
      /^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(?:const|let|var|function\*?|class|interface|type|enum|namespace)\s+([\w$]+)/gm,
    );
    for (const [, name = ''] of declarations) add(name, file);
    for (const [, list = ''] of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}/gm)) {
      for (const item of list.split(',')) {
        const name = item
          .replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '')
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)
          .at(-1)
          ?.trim();
        if (name) add(name, file);
      }
    }
    for (const [, name = ''] of text.matchAll(/^export\s+\*\s+as\s+([\w$]+)/gm)) add(name, file);
  }
  return names;
}

describe('the simulator and the gateway', () => {
  it('the simulator imports nothing from outside simulator/', () => {
    const outside = sourceFiles(SIMULATOR).flatMap((file) =>
      specifiers(file)
        .filter((specifier) => specifier.startsWith('.'))
        .filter((specifier) => !inside(resolve(dirname(file), specifier), SIMULATOR))
        .map((specifier) => `${relative(ROOT, file)} → ${specifier}`),
    );
    expect(outside).toEqual([]);
  });

  it('the gateway (src/) imports nothing from simulator/', () => {
    expect(importsInto(GATEWAY, SIMULATOR)).toEqual([]);
  });

  it('no name is exported by both', () => {
    const simulator = exportedNames(join(SIMULATOR, 'src'));
    const gateway = exportedNames(GATEWAY);
    expect(simulator.size).toBeGreaterThan(50);
    expect(gateway.size).toBeGreaterThan(50);
    const shared = [...simulator]
      .filter(([name]) => gateway.has(name))
      .map(([name, files]) => `${name}: ${[...files, ...(gateway.get(name) ?? [])].join(', ')}`);
    expect(shared).toEqual([]);
  });
});
