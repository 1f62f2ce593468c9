import { z } from 'zod';

/** A problem of a configuration file: where in it (`pages[3].baseUrl`, empty for the whole file). */
export interface FileProblem {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * What `schema` found wrong with `document` (a file's parsed contents), in the file's terms: an
 * unknown key names the key it resembles (`has unknown key baseURL: did you mean baseUrl?`), and
 * that key is then not also reported missing; a missing key is "missing"; zod's own wording of
 * sizes and types ("Too small: expected array to have >=1 items") says what to write instead.
 * Messages a schema words itself are kept as they are.
 */
export function fileProblems(
  schema: z.core.$ZodType,
  document: unknown,
  issues: readonly z.core.$ZodIssue[],
): FileProblem[] {
  /** What each unknown key resembles, and the keys (dotted paths) those suggestions account for. */
  const suggestions = new Map<z.core.$ZodIssue, (string | undefined)[]>();
  const suggested = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    const known = keysAt(schema, issue.path) ?? [];
    const present = valueAt(document, issue.path);
    const likes = issue.keys.map((key) => {
      const like = resembling(key, known);
      return like !== undefined && !has(present, like) ? like : undefined;
    });
    for (const like of likes) if (like !== undefined) suggested.add(dotted([...issue.path, like]));
    suggestions.set(issue, likes);
  }
  const problems: FileProblem[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = keysAt(schema, issue.path) ?? [];
      issue.keys.forEach((key, i) => {
        const like = suggestions.get(issue)?.[i];
        const hint = like
          ? `: did you mean ${like}?`
          : known.length > 0
            ? `: the keys are ${known.join(', ')}`
            : '';
        problems.push({ path: issue.path, message: `has unknown key ${key}${hint}` });
      });
      continue;
    }
    const key = issue.path.at(-1);
    const missing = key !== undefined && !has(valueAt(document, issue.path.slice(0, -1)), key);
    if (missing && suggested.has(dotted(issue.path))) continue;
    problems.push({ path: issue.path, message: missing ? 'is missing' : inFileTerms(issue) });
  }
  return problems;
}

/**
 * A YAML (or JSON) parse error in one line, with the line of the file it points at: the `yaml`
 * library's message ends in "at line 4, column 1:" and puts the line below, out of a one-line
 * problem's reach.
 */
export function parseProblem(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const [first = ''] = message.split('\n');
  const position = (error as { linePos?: readonly { line: number; col: number }[] }).linePos?.[0];
  const line = position && text.split(/\r?\n/)[position.line - 1];
  if (line === undefined) return first.replace(/:$/, '');
  const shown = line.length > 120 ? `${line.slice(0, 120)}…` : line;
  return `${first.replace(/:$/, '')}: ${JSON.stringify(shown)}`;
}

/** Zod's default wording of a size or a type, as what the file should have there. */
function inFileTerms(issue: z.core.$ZodIssue): string {
  const { message } = issue;
  if (issue.code === 'too_small' && message.startsWith('Too small')) {
    return `must have at least ${count(issue.minimum, issue.origin)}`;
  }
  if (issue.code === 'too_big' && message.startsWith('Too big')) {
    return `must have at most ${count(issue.maximum, issue.origin)}`;
  }
  if (issue.code === 'invalid_type' && message.startsWith('Invalid input')) {
    return `must be ${TYPES[issue.expected] ?? issue.expected}`;
  }
  return message;
}

const TYPES: Readonly<Record<string, string>> = {
  array: 'a list',
  object: 'a mapping (key: value)',
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
};

function count(bound: number | bigint, origin: string): string {
  const unit = origin === 'string' ? 'character' : origin === 'array' ? 'item' : '';
  if (!unit) return String(bound);
  return `${bound} ${unit}${Number(bound) === 1 ? '' : 's'}`;
}

/** The key of `known` that `key` most likely meant: the same but for case, or a typo away. */
function resembling(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(key.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein's distance between `a` and `b` (short keys: no bound needed). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The keys the object schema at `path` in `schema` knows, through lists, defaults and pipes. */
function keysAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] | undefined {
  let current: unknown = schema;
  for (const key of path) {
    current = unwrapped(current);
    if (current instanceof z.ZodArray && typeof key === 'number') current = current.element;
    else if (current instanceof z.ZodObject) current = current.shape[String(key)];
    else return undefined;
  }
  current = unwrapped(current);
  return current instanceof z.ZodObject ? Object.keys(current.shape) : undefined;
}

function unwrapped(schema: unknown): unknown {
  let current = schema;
  for (;;) {
    if (current instanceof z.ZodOptional || current instanceof z.ZodDefault) {
      current = current.unwrap();
    } else if (current instanceof z.ZodPipe) current = current.in;
    else return current;
  }
}

function valueAt(document: unknown, path: readonly PropertyKey[]): unknown {
  let current = document;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

const has = (object: unknown, key: PropertyKey) =>
  typeof object === 'object' && object !== null && Object.hasOwn(object, key);

const dotted = (path: readonly PropertyKey[]) => path.map(String).join('.');
