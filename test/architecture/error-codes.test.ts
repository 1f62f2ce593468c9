/**
 * Every `extensions.code` comes from the registry (src/errors/error-code.ts) through its typed
 * builders (`codedError`, `codedExtensions`, `refusal`, `rawRefusal`, an `ExpectedError`'s
 * `code`), whose `code` parameter is an `ErrorCode`: a code not in the registry fails typecheck.
 * What typecheck cannot see is a code written as a plain string where nothing types it, as in
 * `new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } })`; this refuses any such
 * literal in src/ outside src/errors/.
 *
 * Refused: `code: '…'` (or "…", `…`) whose text names a code of the registry or is shaped like
 * one (upper snake case), and any `code` literal inside an `extensions: { … }` object. Allowed:
 * zod's issue codes (`code: 'custom'`, lower case, in no `extensions`), and a union of literal
 * types (`code: 'A' | 'B'`), which typecheck holds to `ErrorCode` where it is passed on. Only
 * src/ is read: the simulator and the tests are not the gateway.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codedError } from '../../src/errors/coded-error.js';
import { ERROR_CODES } from '../../src/errors/error-code.js';

const SRC = join(import.meta.dirname, '../../src');
const REGISTRY = join(SRC, 'errors');

const CODES = new Set(Object.keys(ERROR_CODES));
const CODE_SHAPED = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;
/**
 * A property `code` (first on its line or after `{`, `,` or `(`: not the `: else` of a ternary)
 * and a string literal, unless a `|` follows it (a union type).
 */
const CODE_LITERAL = /(?<=(?:^|[{,(])\s*)code\s*:\s*(['"`])([^'"`\\\n]*)\1(?!\s*\|)/gm;
/** An `extensions` object literal up to its first closing brace, and a `code` literal in it. */
const IN_EXTENSIONS = /\bextensions\s*:\s*\{(?:[^}]*?[{,])?\s*code\s*:\s*(['"`])([^'"`\\\n]*)\1/g;

/** The error codes `source` writes as literals, each as `line: text`. */
function literalCodes(source: string): string[] {
  // Comments blanked out, lines kept: what they say is not code.
  const code = source.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (comment) =>
    comment.replace(/[^\n]/g, ' '),
  );
  const found = new Map<number, string>();
  const lineOf = (index: number) => code.slice(0, index).split('\n').length;
  for (const match of code.matchAll(CODE_LITERAL)) {
    const text = match[2] as string;
    if (CODES.has(text) || CODE_SHAPED.test(text)) found.set(lineOf(match.index), match[0]);
  }
  for (const match of code.matchAll(IN_EXTENSIONS)) {
    const at = match.index + match[0].lastIndexOf('code');
    found.set(lineOf(at), match[0].slice(match[0].lastIndexOf('code')));
  }
  return [...found].sort(([a], [b]) => a - b).map(([line, text]) => `${line}: ${text}`);
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(directory, name));
}

describe('error codes', () => {
  it('are written as literals nowhere in src/ outside src/errors/', () => {
    const files = sourceFiles(SRC).filter((file) => !file.startsWith(`${REGISTRY}/`));
    expect(files.length).toBeGreaterThan(100);
    const literals = files.flatMap((file) =>
      literalCodes(readFileSync(file, 'utf8')).map((found) => `${relative(SRC, file)}:${found}`),
    );
    expect(literals).toEqual([]);
  });

  it('are found by the check however they are written, and zod issue codes are not', () => {
    const source = [
      `new GraphQLError('x', { extensions: { code: 'BAD_USER_INPUT', limit } });`,
      `const refusal = { status: 400, code: "BAD_REQUEST", message };`,
      `new GraphQLError('x', { extensions: { code: 'NOT_A_CODE' } });`,
      `new GraphQLError('x', { extensions: { limit: 'MAX_DEPTH', code: \`oops\` } });`,
      `new GraphQLError('x', { extensions: { code: 'bad_request' } });`,
      `context.addIssue({ code: 'custom', message: 'must be a regular expression' });`,
      `const refuse = (code: 'PAYLOAD_TOO_LARGE' | 'TOO_MANY_UPLOADS') => refusalBody(code, m);`,
      `codes.push(typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR');`,
      `// a comment saying { code: 'BAD_REQUEST' } is not code`,
      `span.setStatus({ code: SpanStatusCode.ERROR, message });`,
      `throw codedError('BAD_USER_INPUT', message, { extensions: { limit } });`,
    ].join('\n');
    expect(literalCodes(source)).toEqual([
      `1: code: 'BAD_USER_INPUT'`,
      `2: code: "BAD_REQUEST"`,
      `3: code: 'NOT_A_CODE'`,
      '4: code: `oops`',
      `5: code: 'bad_request'`,
    ]);
  });

  it('outside the registry fail typecheck where errors are built', () => {
    // `npm run typecheck` fails once either of these is no longer a type error.
    // @ts-expect-error: a code the registry does not have
    codedError('NOT_A_CODE', 'x');
    // @ts-expect-error: the code is given apart, never among the other extensions
    codedError('BAD_USER_INPUT', 'x', { extensions: { code: 'BAD_USER_INPUT' } });
    const error = codedError('BAD_USER_INPUT', 'Too deep.', { extensions: { limit: 'MAX_DEPTH' } });
    expect(error.toJSON()).toEqual({
      message: 'Too deep.',
      extensions: { code: 'BAD_USER_INPUT', limit: 'MAX_DEPTH' },
    });
  });
});
