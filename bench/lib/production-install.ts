/**
 * The gateway's production image without Docker: the Dockerfile's stages replayed in a clean
 * temporary directory, from the Dockerfile itself, so that what runs here follows any change there.
 *
 * The runtime stage is replayed instruction by instruction: its ENV lines, its COPY lines (from the
 * project as the build context, and from the build stage), its `npm ci …` with the Dockerfile's own
 * flags, and its CMD. The build stage it copies `dist/` from is replayed beside it (its COPY lines
 * and `npm run build`, the project's `tsc -p tsconfig.build.json`), at the same time as the install.
 *
 * What is not the image: the base image's file system (Node is this process's Node, which must be
 * the image's major), `USER` (the processes run as whoever runs this), `EXPOSE` and `HEALTHCHECK`
 * (the caller picks the port and probes).
 */
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, posix, resolve } from 'node:path';
import {
  type DockerStage,
  dockerfileStages,
  parseCopy,
  parseEnv,
  parseExecForm,
} from './dockerfile.js';
import { type ManagedProcess, ROOT, type SpawnOptions, spawnNode } from './processes.js';

export interface ProductionInstall {
  /** The runtime stage's WORKDIR, here: where the CMD runs. */
  readonly directory: string;
  /** The Dockerfile's CMD, its `node` being this process's Node (`process.execPath`). */
  readonly argv: readonly string[];
  /** What the runtime stage's ENV lines set (`NODE_ENV=production` among them). */
  readonly env: Readonly<Record<string, string>>;
  /** Wall-clock times in ms: the build stage and the runtime stage's `npm ci` overlap. */
  readonly timings: {
    readonly buildMs: number;
    readonly installMs: number;
    readonly totalMs: number;
  };
  /** Removes everything it made. */
  dispose(): void;
}

export interface ProductionInstallOptions {
  /** The Dockerfile, relative to the project root (its build context). @default 'Dockerfile' */
  dockerfile?: string;
}

/** One command of a RUN: `npm ci` or `npm run build` take minutes at worst on a loaded machine. */
const COMMAND_TIMEOUT_MS = 5 * 60_000;

interface ReplayedStage {
  /** Where the stage's WORKDIR is on this machine. */
  directory: string;
  /** The stage's WORKDIR in the image. */
  workdir: string;
  env: Record<string, string>;
  cmd?: string[];
}

/**
 * Replays the Dockerfile's runtime stage (and the stages it copies from) in a new temporary
 * directory. The install is `npm ci <the Dockerfile's flags> --offline`: it reads the npm cache
 * that the `npm ci` before every `npm test` filled, and fails with ENOTCACHED rather than reach a
 * registry.
 */
export async function installProduction(
  options: ProductionInstallOptions = {},
): Promise<ProductionInstall> {
  const started = performance.now();
  const stages = dockerfileStages(options.dockerfile ?? 'Dockerfile');
  const runtime = stages.at(-1);
  if (!runtime) throw new Error('the Dockerfile has no FROM');
  checkNodeMajor(runtime);

  // realpath: /tmp may be a symlink, and Node resolves modules from the real path.
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'production-install-')));
  const dispose = () => rmSync(root, { recursive: true, force: true });
  // Every stage the runtime stage copies from starts now, so that it builds while npm installs.
  const copiedFrom = new Map<string, Promise<ReplayedStage>>();
  try {
    checkNoNodeModulesAbove(root);
    const timings = { buildMs: 0, installMs: 0 };
    for (const { keyword, args } of runtime.instructions) {
      const from = keyword === 'COPY' ? parseCopy(args).from : undefined;
      if (from === undefined || copiedFrom.has(from)) continue;
      const stage = stages.find((candidate) => candidate.name === from);
      if (!stage || stage === runtime) throw new Error(`COPY --from=${from}: no earlier stage`);
      const stageStarted = performance.now();
      const replayed = replayStage(stage, join(root, `stage-${from}`), 'build', copiedFrom).then(
        (done) => {
          timings.buildMs = performance.now() - stageStarted;
          return done;
        },
      );
      // Awaited at its COPY; a failure before then must not go unhandled meanwhile.
      replayed.catch(() => {});
      copiedFrom.set(from, replayed);
    }
    const image = await replayStage(runtime, join(root, 'image'), 'runtime', copiedFrom, (ms) => {
      timings.installMs = ms;
    });
    const cmd = image.cmd;
    if (cmd?.[0] !== 'node') {
      throw new Error(`the runtime stage's CMD is not ["node", …]: ${JSON.stringify(cmd)}`);
    }
    return {
      directory: image.directory,
      argv: [process.execPath, ...cmd.slice(1)],
      env: image.env,
      timings: { ...timings, totalMs: performance.now() - started },
      dispose,
    };
  } catch (error) {
    // A build still running would write into what is being removed.
    await Promise.allSettled(copiedFrom.values());
    dispose();
    throw error;
  }
}

/**
 * Starts the CMD from the install's directory through `spawnNode` (log capture, `stop()`), with the
 * image's ENV and then `env` (PORT, HOST, the upstreams…).
 */
export function spawnProductionCommand(
  install: ProductionInstall,
  options: Omit<SpawnOptions, 'script' | 'nodeFlags' | 'args' | 'cwd'>,
): ManagedProcess {
  const script = install.argv.at(-1);
  if (script === undefined || script.startsWith('-')) {
    throw new Error(`the CMD ends in no script: ${JSON.stringify(install.argv)}`);
  }
  return spawnNode({
    ...options,
    cwd: install.directory,
    nodeFlags: install.argv.slice(1, -1),
    script,
    env: { ...install.env, ...options.env },
  });
}

/** The image's Node is `node:<major>…`: this process's Node must be that major, or it tests another. */
function checkNodeMajor(runtime: DockerStage): void {
  const major = /^node:(\d+)/.exec(runtime.image)?.[1];
  const ours = process.versions.node.split('.')[0];
  if (major !== undefined && major !== ours) {
    throw new Error(
      `the image runs Node ${major}, this is Node ${process.versions.node} (${process.execPath}): run under npm, whose scripts put the \`node\` devDependency first on PATH`,
    );
  }
}

/** Node looks for packages in every node_modules up the tree: one there would stand in for the install. */
function checkNoNodeModulesAbove(directory: string): void {
  for (let dir = dirname(directory); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules'))) {
      throw new Error(
        `${join(dir, 'node_modules')} is above ${directory}: packages missing from the install would load from it (set TMPDIR elsewhere)`,
      );
    }
    if (dirname(dir) === dir) return;
  }
}

async function replayStage(
  stage: DockerStage,
  directory: string,
  role: 'build' | 'runtime',
  stages: ReadonlyMap<string, Promise<ReplayedStage>>,
  onInstalled?: (ms: number) => void,
): Promise<ReplayedStage> {
  mkdirSync(directory, { recursive: true });
  const replayed: ReplayedStage = { directory, workdir: '/', env: {} };
  let placed = false;
  for (const { keyword, args } of stage.instructions) {
    switch (keyword) {
      case 'WORKDIR': {
        const workdir = posix.resolve(replayed.workdir, args);
        // The directory stands for the WORKDIR: files placed under another one have no place here.
        if (placed && workdir !== replayed.workdir) {
          throw new Error(`WORKDIR ${args} after files were placed: not replayed`);
        }
        replayed.workdir = workdir;
        break;
      }
      case 'ENV':
        Object.assign(replayed.env, parseEnv(args));
        break;
      case 'COPY': {
        const copy = parseCopy(args);
        const from = copy.from === undefined ? undefined : await stages.get(copy.from);
        const destination = inStage(replayed, copy.destination);
        const many = copy.sources.length > 1 || copy.destination.endsWith('/');
        for (const source of copy.sources) {
          if (/[*?[]/.test(source)) throw new Error(`COPY ${args}: globs are not replayed`);
          const path = from ? inStage(from, source) : resolve(ROOT, source);
          if (!existsSync(path)) throw new Error(`COPY ${args}: ${source} does not exist`);
          // As Docker copies: a directory's contents into the destination, a file into it or as it.
          const target =
            statSync(path).isDirectory() || !many ? destination : join(destination, basename(path));
          mkdirSync(statSync(path).isDirectory() ? target : dirname(target), { recursive: true });
          cpSync(path, target, { recursive: true });
        }
        placed = true;
        break;
      }
      case 'RUN':
        for (const command of args.split('&&').map((part) => part.trim())) {
          await replayCommand(command, replayed, role, onInstalled);
        }
        placed = true;
        break;
      case 'CMD':
        replayed.cmd = parseExecForm(args);
        break;
      // The caller runs the CMD as itself, on a port of its choosing, and probes it.
      case 'USER':
      case 'EXPOSE':
      case 'HEALTHCHECK':
        break;
      default:
        throw new Error(
          `${keyword} ${args}: not replayed (production-install.ts does not know it)`,
        );
    }
  }
  return replayed;
}

/** Where a path of the stage's image (absolute, or relative to its WORKDIR) is here. */
function inStage(stage: ReplayedStage, path: string): string {
  const inImage = posix.resolve(stage.workdir, path);
  const relative = posix.relative(stage.workdir, inImage);
  if (relative.startsWith('..')) {
    throw new Error(`${path} is outside the WORKDIR ${stage.workdir}: not replayed`);
  }
  return join(stage.directory, relative);
}

async function replayCommand(
  command: string,
  stage: ReplayedStage,
  role: 'build' | 'runtime',
  onInstalled?: (ms: number) => void,
): Promise<void> {
  // It only makes the image's layer smaller; here it would empty the machine's own npm cache, which
  // the offline install reads.
  if (/^npm cache clean\b/.test(command)) return;
  if (/^npm ci\b/.test(command)) {
    if (role === 'build') {
      // The build stage installs every dependency to compile with: the project's own node_modules
      // is that install (`npm ci` precedes `npm test`), and the compiler output does not depend on
      // where the compiler came from.
      symlinkSync(resolve(ROOT, 'node_modules'), join(stage.directory, 'node_modules'));
      return;
    }
    const installStarted = performance.now();
    const [npm = 'npm', ...args] = command.split(/\s+/);
    await run(npm, [...args, '--offline'], stage).catch((error: Error) => {
      throw /ENOTCACHED/.test(error.message)
        ? new Error(
            `${error.message}\nThe npm cache lacks a package of the lockfile: run \`npm ci\` (online, as .ci/run does) first.`,
          )
        : error;
    });
    onInstalled?.(performance.now() - installStarted);
    return;
  }
  await run('sh', ['-c', command], stage);
}

/**
 * Runs a command in the stage's directory with the stage's ENV over a clean environment: no npm_*
 * variables of an npm that runs this (`npm_config_prefix` would move the install), but the cache
 * it uses, and this Node first on PATH.
 */
function run(command: string, args: string[], stage: ReplayedStage): Promise<void> {
  const env: Record<string, string> = {
    PATH: [dirname(process.execPath), process.env.PATH ?? '/usr/bin:/bin'].join(delimiter),
    HOME: process.env.HOME ?? '/tmp',
    ...(process.env.npm_config_cache ? { npm_config_cache: process.env.npm_config_cache } : {}),
    ...stage.env,
  };
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      cwd: stage.directory,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: COMMAND_TIMEOUT_MS,
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      // The end says why it failed; a long install log is cut from the front.
      output = (output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', fail);
    child.on('close', (code, signal) => {
      if (code === 0) done();
      else fail(new Error(`${command} ${args.join(' ')} failed (${signal ?? code}):\n${output}`));
    });
  });
}
