/**
 * The suite's own rules, checked on its sources.
 *
 * No test sleeps a fixed time over 100 ms. A test that waits for something to happen waits for
 * it (`eventually()` on what shows it: a request counted, a log line, a metric); a test about
 * time (a TTL, a poll interval, a cool-down) puts the code on a clock it moves (`testClock()`, a
 * `now` option); a test that something does not happen shows first that it would have by now (a
 * witness that did happen). A fixed sleep of up to 100 ms is tolerated where nothing else says
 * it, and none is better.
 *
 * Checked: `sleep(<ms>)` and `setTimeout(resolve, <ms>)` (a promise resolved after a time), whose
 * `<ms>` is a number, a constant of the file (`const NAME = <number>`) or arithmetic over them.
 * A time the check cannot work out (a variable) is refused too: say it with a constant.
 *
 * No test asserts only over the items of a list that may be empty: a test whose every `expect`
 * runs inside a loop (`for … of`, `for … in`, `.forEach`, `.every`, `.map` and the like) over a
 * list that is not written out in the file passes on an empty list, having checked nothing. Such a
 * test asserts the list too (its length, its contents), or on the whole list at once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAst } from 'vitest/node';

const ROOT = join(import.meta.dirname, '..');
const MAX_SLEEP_MS = 100;
/**
 * Where the waiting helpers are defined (`sleep`, `eventually`, a subscriber's `next`): how long
 * they wait is their callers' to say.
 */
const DEFINITIONS = new Set(['test/helpers/eventually.ts', 'test/helpers/subscriptions.ts']);

function sourceFiles(directory: string): string[] {
  return readdirSync(join(ROOT, directory), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(directory, name));
}

/** `expression` in ms, with the file's numeric constants put in; `undefined` if it is not that. */
function millisecondsOf(expression: string, source: string): number | undefined {
  const constants = new Map(
    [...source.matchAll(/\bconst\s+(\w+)\s*=\s*([\d_.]+)\s*;/g)].map(([, name, value]) => [
      name,
      (value ?? '').replaceAll('_', ''),
    ]),
  );
  const arithmetic = expression
    .replace(/\b[A-Za-z_]\w*\b/g, (name) => constants.get(name) ?? name)
    .replaceAll('_', '');
  if (!/^[\d.\s+\-*/()]+$/.test(arithmetic)) return undefined;
  const value: unknown = new Function(`return (${arithmetic});`)();
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Every fixed sleep over the limit, or whose length cannot be worked out, as `file:line: code`. */
function longSleeps(file: string): string[] {
  // Comments blanked out, lines kept: what they say is not a sleep.
  const source = readFileSync(join(ROOT, file), 'utf8').replace(
    /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g,
    (comment) => comment.replace(/[^\n]/g, ' '),
  );
  const found: string[] = [];
  const sleeps =
    /\bsleep\(([^()]*(?:\([^()]*\)[^()]*)*)\)|\bsetTimeout\(\s*(?:resolve|r)\s*,\s*([^()]*(?:\([^()]*\)[^()]*)*)\)/g;
  for (const match of source.matchAll(sleeps)) {
    const expression = (match[1] ?? match[2] ?? '').trim();
    const ms = millisecondsOf(expression, source);
    if (ms !== undefined && ms <= MAX_SLEEP_MS) continue;
    const line = source.slice(0, match.index).split('\n').length;
    found.push(`${file}:${line}: ${match[0]}${ms === undefined ? '' : ` (${ms} ms)`}`);
  }
  return found;
}

/** An ESTree node as parsed: its kind, where it is, and its fields. */
interface Node {
  readonly type: string;
  readonly start: number;
  readonly end: number;
  readonly [field: string]: unknown;
}

const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && typeof (value as Node).type === 'string';
const childrenOf = (node: Node): Node[] =>
  Object.values(node).flatMap((value) =>
    Array.isArray(value) ? value.filter(isNode) : isNode(value) ? [value] : [],
  );
const isFunction = (node: unknown): node is Node =>
  isNode(node) && (node.type === 'ArrowFunctionExpression' || node.type === 'FunctionExpression');
/** The name an expression starts from: `it` for `it`, `it.each(…)` and `it.skip`. */
const rootName = (node: unknown): string | undefined => {
  if (!isNode(node)) return undefined;
  if (node.type === 'Identifier') return node.name as string;
  if (node.type === 'MemberExpression') return rootName(node.object);
  if (node.type === 'CallExpression') return rootName(node.callee);
  return undefined;
};
const isCall = (node: Node, names: readonly string[]) =>
  node.type === 'CallExpression' && names.includes(rootName(node.callee) ?? '');
/** Calls that run their function once per item: `list.forEach(item => …)` and the like. */
const PER_ITEM = new Set([
  'forEach',
  'every',
  'some',
  'map',
  'flatMap',
  'filter',
  'find',
  'reduce',
]);

/**
 * The list `loop` runs `body` once per item of, if it is such a loop: `for (… of list)`,
 * `for (… in list)`, or `list.forEach(body)` and the like.
 */
function listOf(loop: Node, body: Node): unknown {
  if ((loop.type === 'ForOfStatement' || loop.type === 'ForInStatement') && loop.body === body) {
    return loop.right;
  }
  const callee = loop.callee as Node | undefined;
  if (
    loop.type === 'CallExpression' &&
    isFunction(body) &&
    (loop.arguments as Node[])[0] === body
  ) {
    const method = callee?.type === 'MemberExpression' ? (callee.property as Node).name : '';
    if (PER_ITEM.has(method as string)) return callee?.object;
  }
  return undefined;
}

/**
 * Whether `list` is written out in the file, not empty: `[a, …]`, `Array.from({ length })`, the
 * keys, values or entries of one, or a `const` that `constantValue` finds to be one.
 */
function writtenOut(list: unknown, constantValue: (name: Node) => Node | undefined): boolean {
  if (!isNode(list)) return false;
  switch (list.type) {
    case 'ArrayExpression':
      return (list.elements as unknown[]).length > 0;
    case 'TSAsExpression':
    case 'TSSatisfiesExpression':
      return writtenOut(list.expression, constantValue);
    case 'Identifier':
      return writtenOut(constantValue(list), constantValue);
    case 'CallExpression': {
      const callee = list.callee as Node;
      const method = callee.type === 'MemberExpression' ? (callee.property as Node).name : '';
      const [first] = list.arguments as Node[];
      if (rootName(callee) === 'Array' && method === 'from')
        return first?.type === 'ObjectExpression';
      if (['keys', 'values', 'entries'].includes(method as string) && !first) {
        return writtenOut(callee.object, constantValue);
      }
      return false;
    }
    default:
      return false;
  }
}

/** Every test whose assertions all run once per item of a list that may be empty, as `file:line: title`. */
function loopOnlyAssertions(
  file: string,
  source = readFileSync(join(ROOT, file), 'utf8'),
): string[] {
  const program = parseAst(source, { lang: 'ts' }) as unknown as Node;
  const parents = new Map<Node, Node>();
  const index = (node: Node) => {
    for (const child of childrenOf(node)) {
      parents.set(child, node);
      index(child);
    }
  };
  index(program);
  /** What the `const` an identifier names was set to, in the nearest block that declares it. */
  const constantValue = (identifier: Node): Node | undefined => {
    for (let scope = parents.get(identifier); scope; scope = parents.get(scope)) {
      if (!Array.isArray(scope.body)) continue;
      for (const statement of scope.body as Node[]) {
        const declaration = isNode(statement.declaration) ? statement.declaration : statement;
        if (declaration.type !== 'VariableDeclaration' || declaration.kind !== 'const') continue;
        const found = (declaration.declarations as Node[]).find(
          (declarator) => (declarator.id as Node).name === identifier.name,
        );
        if (found) return isNode(found.init) ? found.init : undefined;
      }
    }
    return undefined;
  };
  const found: string[] = [];
  const visit = (node: Node) => {
    const test = isCall(node, ['it', 'test'])
      ? (node.arguments as Node[]).find(isFunction)
      : undefined;
    if (test) {
      const expects: Node[] = [];
      const collect = (inner: Node) => {
        if (inner !== node && isCall(inner, ['it', 'test'])) return;
        if (isCall(inner, ['expect'])) expects.push(inner);
        childrenOf(inner).forEach(collect);
      };
      collect(test.body as Node);
      /** Whether `assertion` runs whatever the lists hold: in no loop over a list that may be empty. */
      const runs = (assertion: Node) => {
        for (
          let body = assertion, loop = parents.get(assertion);
          loop && body !== test;
          body = loop, loop = parents.get(loop)
        ) {
          const list = listOf(loop, body);
          if (list !== undefined && !writtenOut(list, constantValue)) return false;
        }
        return true;
      };
      if (expects.length > 0 && !expects.some(runs)) {
        const line = source.slice(0, node.start).split('\n').length;
        const [title] = node.arguments as Node[];
        found.push(
          `${file}:${line}: ${source.slice(title?.start ?? 0, title?.end ?? 0).slice(0, 80)}`,
        );
      }
    }
    childrenOf(node).forEach(visit);
  };
  visit(program);
  return found;
}

describe('the tests', () => {
  const files = [...sourceFiles('test'), ...sourceFiles('simulator/test')]
    .map((file) => relative(ROOT, join(ROOT, file)))
    .filter((file) => !DEFINITIONS.has(file));

  it('are found where the suite runs them', () => {
    expect(files).toContain('test/test-hygiene.test.ts');
    expect(files.some((file) => file.startsWith('simulator/test/'))).toBe(true);
  });

  it(`never sleep a fixed time over ${MAX_SLEEP_MS} ms`, () => {
    expect(files.flatMap(longSleeps)).toEqual([]);
  });

  it('never assert only over the items of a list that may be empty', () => {
    expect(files.flatMap((file) => loopOnlyAssertions(file))).toEqual([]);
  });

  it('tell a list that may be empty from one written out, and an assertion that runs from one in its loop', () => {
    const flagged = (body: string) =>
      loopOnlyAssertions(
        'x.test.ts',
        `const KINDS = ['a', 'b'];\nit('t', async () => {\n${body}\n});`,
      );
    expect(flagged('for (const x of list()) expect(x).toBe(1);')).toEqual(["x.test.ts:2: 't'"]);
    expect(flagged('list().forEach((x) => { expect(x).toBe(1); });')).toHaveLength(1);
    expect(flagged('for (const [k, v] of Object.entries(o)) expect(v, k).toBe(1);')).toHaveLength(
      1,
    );
    expect(
      flagged(
        'const xs = list();\nexpect(xs).toHaveLength(2);\nfor (const x of xs) expect(x).toBe(1);',
      ),
    ).toEqual([]);
    expect(flagged('for (const kind of KINDS) expect(kind).toBeTruthy();')).toEqual([]);
    expect(flagged("for (const m of ['GET', 'POST'] as const) expect(m).toBeTruthy();")).toEqual(
      [],
    );
    expect(
      flagged('for (const x of Array.from({ length: 3 })) expect(x).toBeUndefined();'),
    ).toEqual([]);
    expect(flagged('for (let i = 0; i < n; i++) expect(i).toBeLessThan(n);')).toEqual([]);
  });

  it('tell a long sleep, and one they cannot read, from a short one', () => {
    const source = 'const TTL_MS = 150;\nconst SHORT = 20;\n';
    expect(millisecondsOf('3 * TTL_MS', source)).toBe(450);
    expect(millisecondsOf('SHORT', source)).toBe(20);
    expect(millisecondsOf('1_050', source)).toBe(1050);
    expect(millisecondsOf('ms', source)).toBeUndefined();
  });
});
