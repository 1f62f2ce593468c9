/**
 * A Dockerfile read as its builders read it: stages (`FROM … AS name`) and their instructions, with
 * comments dropped and continued lines joined. Enough of the syntax for this project's Dockerfiles
 * (no parser directives, no heredocs: `test/deploy/docker-compose.test.ts` keeps them out), for the
 * tests that check them and for `production-install.ts`, which replays the gateway's.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ROOT } from './processes.js';

export interface DockerInstruction {
  /** Upper case: `RUN`, `COPY`, `ENV`… */
  keyword: string;
  /** The rest of the line, trimmed. */
  args: string;
}

export interface DockerStage {
  /** The image it starts from: a base image, or an earlier stage's name. */
  image: string;
  /** `FROM … AS <name>`. */
  name?: string;
  instructions: DockerInstruction[];
}

/** The stages of the Dockerfile at `path` (relative to the project root), in order. */
export function dockerfileStages(path = 'Dockerfile'): DockerStage[] {
  const lines = readFileSync(resolve(ROOT, path), 'utf8')
    .split(/\r?\n/)
    .filter((line) => !line.trim().startsWith('#'))
    .join('\n')
    .replace(/\\\r?\n/g, ' ')
    .split('\n');
  const stages: DockerStage[] = [];
  for (const line of lines) {
    const match = /^\s*(\w+)\s*(.*)$/.exec(line);
    if (!match) continue;
    const keyword = (match[1] ?? '').toUpperCase();
    const args = (match[2] ?? '').trim();
    if (keyword === 'FROM') {
      const [image = '', as, name] = args.split(/\s+/).filter((arg) => !arg.startsWith('--'));
      stages.push({
        image,
        ...(as?.toUpperCase() === 'AS' && name ? { name } : {}),
        instructions: [],
      });
    } else {
      stages.at(-1)?.instructions.push({ keyword, args });
    }
  }
  return stages;
}

/** The stage an image is made of: the last. */
export function finalStage(path = 'Dockerfile'): DockerStage {
  const stage = dockerfileStages(path).at(-1);
  if (!stage) throw new Error(`${path} has no FROM`);
  return stage;
}

/** The arguments of a stage's instructions of one kind, in order. */
export function argsOf(stage: DockerStage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

export interface DockerCopy {
  /** `--from=<stage>`: copied from that stage's file system, not from the build context. */
  from?: string;
  sources: string[];
  destination: string;
}

/** A COPY's arguments: its `--from`, its sources and its destination (other flags dropped). */
export function parseCopy(args: string): DockerCopy {
  const words = args.split(/\s+/).filter(Boolean);
  const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
  const paths = words.filter((word) => !word.startsWith('--'));
  const destination = paths.pop();
  if (destination === undefined || paths.length === 0) {
    throw new Error(`COPY ${args}: no source or no destination`);
  }
  return { ...(from ? { from } : {}), sources: paths, destination };
}

/** An ENV's variables, both forms: `KEY=value …` (values maybe quoted) and `KEY value`. */
export function parseEnv(args: string): Record<string, string> {
  if (!/^[A-Za-z_]\w*=/.test(args)) {
    const [key = '', ...value] = args.split(/\s+/);
    return { [key]: value.join(' ') };
  }
  const variables: Record<string, string> = {};
  for (const match of args.matchAll(/([A-Za-z_]\w*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g)) {
    const raw = match[2] ?? '';
    variables[match[1] ?? ''] = raw.startsWith('"')
      ? raw.slice(1, -1).replace(/\\(.)/g, '$1')
      : raw.startsWith("'")
        ? raw.slice(1, -1)
        : raw;
  }
  return variables;
}

/** A CMD or ENTRYPOINT in exec form (a JSON array); the shell form is refused. */
export function parseExecForm(args: string): string[] {
  const parsed: unknown = args.startsWith('[') ? JSON.parse(args) : undefined;
  if (!Array.isArray(parsed) || !parsed.every((word) => typeof word === 'string')) {
    throw new Error(`${args}: not in exec form (a JSON array of strings)`);
  }
  return parsed;
}
