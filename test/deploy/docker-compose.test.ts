/**
 * The compose stack, checked without a Docker engine: what the files say, and the parts that can run
 * on this machine (the healthcheck scripts, against the real simulator and gateway on loopback).
 */
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  argsOf,
  type DockerStage,
  dockerfileStages,
  finalStage,
  parseCopy,
} from '../../bench/lib/dockerfile.js';
import { startSimulator } from '../../simulator/src/server.js';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config.js';
import { eventually } from '../helpers/eventually.js';
import { startHarness } from '../helpers/harness.js';
import { REDIS_INSTALL_TIMEOUT_MS, startRedisServer } from '../helpers/redis-server.js';
import { findExecutable } from '../helpers/system-package.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The image's working directory (`WORKDIR /gateway` in Hive Gateway's Dockerfile). */
const HIVE_GATEWAY_WORKDIR = '/gateway';
/** Hive Gateway's port when neither `--port` nor `PORT` says otherwise. */
const HIVE_GATEWAY_DEFAULT_PORT = 4000;
const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

// --- docker-compose.yml -------------------------------------------------------------------------

type Scalar = string | number | boolean | null;
interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, Scalar> | string[];
  ports?: (string | number | { target: number; published?: string | number; host_ip?: string })[];
  volumes?: (string | { type?: string; source?: string; target?: string; read_only?: boolean })[];
  healthcheck?: { test?: string | string[]; disable?: boolean };
  depends_on?: string[] | Record<string, { condition?: string }>;
}

const compose = parse(read('docker-compose.yml')) as { services?: Record<string, Service> };
const services = compose.services ?? {};

function service(name: string): Service {
  const found = services[name];
  if (!found) throw new Error(`docker-compose.yml has no "${name}" service`);
  return found;
}

/** The environment a service sets, as the process sees it (every value a string). */
function environmentOf(name: string): Record<string, string> {
  const { environment = {} } = service(name);
  if (Array.isArray(environment)) {
    return Object.fromEntries(
      environment.map((entry) => {
        const at = entry.indexOf('=');
        return at === -1 ? [entry, ''] : [entry.slice(0, at), entry.slice(at + 1)];
      }),
    );
  }
  return Object.fromEntries(
    Object.entries(environment).map(([key, value]) => [key, value === null ? '' : String(value)]),
  );
}

interface PortMapping {
  hostIp?: string;
  published?: number;
  target: number;
}

function portsOf(name: string): PortMapping[] {
  return (service(name).ports ?? []).map((port): PortMapping => {
    if (typeof port === 'number') return { target: port };
    if (typeof port === 'object') {
      return {
        target: Number(port.target),
        ...(port.published === undefined ? {} : { published: Number(port.published) }),
        ...(port.host_ip === undefined ? {} : { hostIp: port.host_ip }),
      };
    }
    const parts = port.replace(/\/(tcp|udp)$/, '').split(':');
    const target = Number(parts.pop());
    const published = parts.pop();
    const hostIp = parts.join(':') || undefined;
    return {
      target,
      ...(published ? { published: Number(published) } : {}),
      ...(hostIp ? { hostIp } : {}),
    };
  });
}

interface BindMount {
  source: string;
  target: string;
  readOnly: boolean;
}

function bindMountsOf(name: string): BindMount[] {
  return (service(name).volumes ?? []).flatMap((volume): BindMount[] => {
    if (typeof volume === 'string') {
      const [source = '', target = '', mode = ''] = volume.split(':');
      // A bare name is a named volume, not a file of the repository.
      if (!/^[./~]/.test(source)) return [];
      return [{ source, target, readOnly: mode.split(',').includes('ro') }];
    }
    if (volume.type !== 'bind' || !volume.source || !volume.target) return [];
    return [{ source: volume.source, target: volume.target, readOnly: volume.read_only === true }];
  });
}

function commandOf(name: string): string[] {
  const { command } = service(name);
  if (command === undefined) return [];
  return Array.isArray(command) ? command : command.split(/\s+/).filter(Boolean);
}

/** The `node -e` script of a healthcheck written as `["CMD", "node", "-e", script]`. */
function nodeHealthcheckScript(test: string | string[] | undefined): string {
  expect(Array.isArray(test), 'exec form: ["CMD", "node", "-e", script]').toBe(true);
  const [form, program, flag, script] = test as string[];
  // node:24-slim has neither curl nor wget: the probe must be node itself.
  expect([form, program, flag]).toEqual(['CMD', 'node', '-e']);
  expect(typeof script).toBe('string');
  return script as string;
}

/** Runs a healthcheck script the way the container would, and resolves its exit code. */
function runNode(script: string, env: Record<string, string> = {}): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], {
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

/** An image reference's tag, or its digest when it has one. */
function imageVersion(image: string): string | undefined {
  const at = image.indexOf('@');
  if (at !== -1) return image.slice(at + 1);
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  return colon === -1 ? undefined : lastSegment.slice(colon + 1);
}

describe('docker-compose.yml', () => {
  it('defines the simulator, the gateway and Hive Gateway', () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining(['simulator', 'gateway', 'hive-gateway']),
    );
  });

  it('builds the simulator and the gateway from a context and a Dockerfile that exist', () => {
    for (const name of ['simulator', 'gateway']) expect(service(name).build).toBeDefined();
    for (const [name, { build }] of Object.entries(services)) {
      if (build === undefined) continue;
      const { context = '.', dockerfile = 'Dockerfile' } =
        typeof build === 'string' ? { context: build } : build;
      const contextDir = resolve(ROOT, context);
      expect(statSync(contextDir).isDirectory(), `${name}: build context ${context}`).toBe(true);
      expect(existsSync(resolve(contextDir, dockerfile)), `${name}: ${dockerfile}`).toBe(true);
    }
  });

  it('builds the simulator from its own Dockerfile, never from the gateway image', () => {
    const build = service('simulator').build;
    expect(typeof build === 'object' ? build.dockerfile : undefined).toBe('simulator/Dockerfile');
    const gatewayBuild = service('gateway').build;
    expect(
      typeof gatewayBuild === 'object' ? (gatewayBuild.dockerfile ?? 'Dockerfile') : 'Dockerfile',
    ).toBe('Dockerfile');
    expect(existsSync(join(ROOT, 'simulator/src/main.ts'))).toBe(true);
  });

  it('pins every image it pulls to a version, never latest', () => {
    const pulled = Object.entries(services).filter(([, { image, build }]) => image && !build);
    expect(pulled.map(([name]) => name)).toContain('hive-gateway');
    for (const [name, { image = '' }] of pulled) {
      const version = imageVersion(image);
      expect(version, `${name}: ${image} has no tag`).toBeDefined();
      expect(version, `${name}: ${image}`).not.toBe('latest');
      // A full x.y.z (a major or minor tag moves) or a digest.
      expect(version, `${name}: ${image}`).toMatch(
        /^(\d+\.\d+\.\d+([-.][\w.]+)?|sha256:[0-9a-f]{64})$/,
      );
    }
    expect(service('hive-gateway').image).toMatch(/^ghcr\.io\/graphql-hive\/gateway[:@]/);
  });

  describe('the gateway environment', () => {
    it('sets only settings src/config.ts knows, each to a value it accepts', () => {
      const environment = environmentOf('gateway');
      expect(Object.keys(environment).length).toBeGreaterThan(0);
      expect(() => loadConfig(environment)).not.toThrow();
      for (const [key, value] of Object.entries(environment)) {
        // An empty value counts as unset, and null would pass the host's value through.
        expect(value.trim(), `${key} is empty`).not.toBe('');
        expect(CONFIG_VARIABLES, `${key} is not a setting of src/config.ts`).toHaveProperty(key);
      }
    });

    it('runs in production, listens beyond loopback, and keeps the cookie usable over http', () => {
      const config = loadConfig(environmentOf('gateway'));
      expect(config.environment).toBe('production');
      expect(LOOPBACK).not.toContain(config.server.host);
      expect(config.verification.sessionCookieSecure).toBe(false);
      expect(portsOf('gateway').map((port) => port.target)).toContain(config.server.port);
    });

    it('points both upstreams at the simulator service, on the paths the simulator serves', async () => {
      const simulatorEnvironment = environmentOf('simulator');
      const simulatorPort = Number(simulatorEnvironment.SIMULATOR_PORT || 4010);
      // The simulator listens on 127.0.0.1 unless told otherwise: unreachable from the gateway.
      expect(simulatorEnvironment.SIMULATOR_HOST).toBeDefined();
      expect(LOOPBACK).not.toContain(simulatorEnvironment.SIMULATOR_HOST);

      const config = loadConfig(environmentOf('gateway'));
      const status = new URL(config.statusFeed.pages[0]?.baseUrl ?? '');
      const verify = new URL(config.verification.baseUrl);
      for (const url of [status, verify]) {
        expect(url.hostname).toBe('simulator');
        expect(Number(url.port || 80)).toBe(simulatorPort);
      }

      const simulator = await startSimulator();
      try {
        expect(status.pathname).toBe(new URL(simulator.statusBaseUrl).pathname);
        expect(verify.pathname).toBe(new URL(simulator.verifyBaseUrl).pathname);
      } finally {
        await simulator.close();
      }
    });
  });

  it('publishes each host port once', () => {
    const published = Object.keys(services).flatMap((name) =>
      portsOf(name).flatMap((port) => (port.published === undefined ? [] : [port.published])),
    );
    expect(published.length).toBeGreaterThanOrEqual(3);
    expect(new Set(published).size).toBe(published.length);
    expect(portsOf('hive-gateway').map((port) => port.published)).toContain(4001);
    expect(portsOf('gateway').map((port) => port.published)).toContain(4000);
  });

  it('publishes every port on loopback only', () => {
    expect(Object.keys(services).flatMap((name) => portsOf(name)).length).toBeGreaterThan(0);
    for (const name of Object.keys(services)) {
      for (const port of portsOf(name)) {
        expect(
          port.published,
          `${name}: ${port.target} is published on a random port`,
        ).toBeDefined();
        expect(port.hostIp, `${name}: ${port.target} is published on every interface`).toBe(
          '127.0.0.1',
        );
      }
    }
  });

  it('says what the stack serves and what it needs from outside, truthfully', () => {
    const header = read('docker-compose.yml')
      .split(/\r?\n/)
      .filter((line) => line.startsWith('#'))
      .join('\n');
    const section = read('docs/federation.md')
      .split(/^## Compose stack$/m)[1]
      ?.split(/^## /m)[0];
    expect(section, 'docs/federation.md has a "Compose stack" section').toBeDefined();
    // GraphiQL is off in production unless GRAPHIQL turns it on.
    const { graphiql } = loadConfig(environmentOf('gateway'));
    for (const text of [header, section ?? '']) {
      const claims = text.split('\n').filter((line) => /graphiql/i.test(line));
      for (const line of claims) {
        if (graphiql) expect(line).not.toMatch(/no GraphiQL|GraphiQL (and \w+ )?(is|are) off/i);
        else expect(line, line).toMatch(/no GraphiQL|GraphiQL (and \w+ )?(is|are) off/i);
      }
    }
    // Running is offline, building is not: every image the stack starts from is named as pulled.
    const pulled = [
      ...[GATEWAY_DOCKERFILE, SIMULATOR_DOCKERFILE].flatMap((path) => {
        const stages = dockerfileStages(path);
        const names = new Set(stages.flatMap((stage) => (stage.name ? [stage.name] : [])));
        return stages.map((stage) => stage.image).filter((image) => !names.has(image));
      }),
      ...Object.values(services).flatMap(({ image, build }) => (image && !build ? [image] : [])),
    ];
    expect(pulled.length).toBeGreaterThanOrEqual(3);
    for (const text of [header, section ?? '']) {
      expect(text).toMatch(/offline/);
      expect(text).toMatch(/not offline|are not|is not/);
      expect(text).toMatch(/npm registry/);
      for (const image of new Set(pulled)) {
        // Named as pulled, with its tag or by name alone (`redis`).
        const bare = image.split(/[:@]/)[0] ?? image;
        expect(text.includes(image) || text.includes(bare), `${image} is not named`).toBe(true);
      }
    }
  });

  it('has a healthcheck on every service', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['simulator', 'gateway']));
    for (const [name, { healthcheck }] of Object.entries(services)) {
      expect(healthcheck?.disable, name).not.toBe(true);
      const test = healthcheck?.test;
      expect(test, `${name} has no healthcheck`).toBeDefined();
      expect(Array.isArray(test) ? test[0] : test, name).not.toBe('NONE');
    }
  });

  it('starts each service once what it depends on is healthy', () => {
    expect(Object.keys(service('gateway').depends_on ?? {})).toContain('simulator');
    expect(Object.keys(service('hive-gateway').depends_on ?? {})).toContain('gateway');
    for (const [name, { depends_on: dependsOn }] of Object.entries(services)) {
      if (dependsOn === undefined) continue;
      // The list form means service_started.
      expect(Array.isArray(dependsOn), `${name}: depends_on needs conditions`).toBe(false);
      for (const [dependency, { condition }] of Object.entries(dependsOn)) {
        expect(Object.keys(services), `${name} depends on ${dependency}`).toContain(dependency);
        expect(condition, `${name} → ${dependency}`).toBe('service_healthy');
        expect(service(dependency).healthcheck?.test, dependency).toBeDefined();
      }
    }
  });

  it('bind-mounts only files of the repository that exist, read-only', () => {
    expect(Object.keys(services).flatMap((name) => bindMountsOf(name)).length).toBeGreaterThan(0);
    for (const name of Object.keys(services)) {
      for (const mount of bindMountsOf(name)) {
        expect(mount.readOnly, `${name}: ${mount.source}`).toBe(true);
        // The supergraph is generated; the next test covers it.
        if (mount.source.endsWith('supergraph.graphql')) continue;
        expect(existsSync(resolve(ROOT, mount.source)), `${name}: ${mount.source}`).toBe(true);
      }
    }
  });

  describe('redis', () => {
    it("is the gateway's REDIS_URL, pinned, persisting nothing, reached by the gateway alone", () => {
      const redis = loadConfig(environmentOf('gateway')).redis;
      expect(redis).toBeDefined();
      const url = new URL(redis?.url ?? 'missing:');
      expect(url.hostname).toBe('redis');
      expect(Number(url.port || 6379)).toBe(6379);
      expect(service('redis').image).toMatch(/^redis:\d+\.\d+\.\d+-alpine$/);
      expect(service('redis').ports ?? []).toEqual([]);
      expect(commandOf('redis')).toEqual(['redis-server', '--save', '', '--appendonly', 'no']);
      expect(service('gateway').depends_on).toMatchObject({
        redis: { condition: 'service_healthy' },
      });
    });

    it(
      'probes with redis-cli ping, which passes on a real redis-server and fails when it is down',
      async () => {
        const test = service('redis').healthcheck?.test;
        expect(test).toEqual(['CMD', 'redis-cli', 'ping']);
        const server = await startRedisServer();
        const cli = findExecutable('redis-cli');
        expect(cli, 'redis-cli comes with redis-server').toBeDefined();
        const probe = () =>
          new Promise<number | null>((done, reject) => {
            const child = spawn(cli ?? 'redis-cli', ['-p', String(server.port), 'ping'], {
              stdio: 'ignore',
            });
            child.on('error', reject);
            child.on('exit', (code) => done(code));
          });
        try {
          expect(await probe()).toBe(0);
        } finally {
          await server.stop();
        }
        expect(await probe()).not.toBe(0);
      },
      REDIS_INSTALL_TIMEOUT_MS,
    );
  });

  describe('hive-gateway', () => {
    it('serves the mounted supergraph, which exists or `npm run generate` writes', () => {
      const [subcommand, ...args] = commandOf('hive-gateway');
      expect(subcommand).toBe('supergraph');
      const pathArgument = args.find((arg) => !arg.startsWith('-')) ?? 'supergraph.graphql';
      const servedPath = posix.resolve(HIVE_GATEWAY_WORKDIR, pathArgument);

      const mount = bindMountsOf('hive-gateway').find((m) => m.target === servedPath);
      expect(mount, `nothing is mounted at ${servedPath}`).toBeDefined();
      const source = resolve(ROOT, mount?.source ?? '');
      expect(dirname(source)).toBe(resolve(ROOT));
      expect(source.endsWith(`${posix.sep}supergraph.graphql`)).toBe(true);

      if (existsSync(source)) {
        expect(statSync(source).isFile()).toBe(true);
        // Hive Gateway reaches each subgraph at the URL composed in: a service of this stack.
        const subgraphs = [
          ...readFileSync(source, 'utf8').matchAll(
            /@join__graph\(name: "[^"]*", url: "([^"]*)"\)/g,
          ),
        ].map((match) => new URL(match[1] ?? 'missing:'));
        expect(subgraphs.length).toBeGreaterThan(0);
        for (const url of subgraphs) {
          expect(Object.keys(services), url.href).toContain(url.hostname);
          const port = loadConfig(environmentOf(url.hostname)).server.port;
          expect(Number(url.port || 80), url.href).toBe(port);
          expect(url.pathname).toBe('/graphql');
        }
      } else {
        // Not composed yet: the script that writes it must exist.
        const { scripts = {} } = JSON.parse(read('package.json')) as {
          scripts?: Record<string, string>;
        };
        expect(scripts.generate, 'package.json has no "generate" script').toBeDefined();
      }
    });

    it('loads the Hive Gateway config from the working directory', () => {
      const mount = bindMountsOf('hive-gateway').find(
        (m) => m.target === posix.join(HIVE_GATEWAY_WORKDIR, 'gateway.config.ts'),
      );
      expect(mount?.source).toMatch(/^(\.\/)?deploy\/gateway\.config\.ts$/);
    });

    it('publishes and probes the port it listens on, on a health endpoint it serves', () => {
      const port = Number(environmentOf('hive-gateway').PORT || HIVE_GATEWAY_DEFAULT_PORT);
      expect(portsOf('hive-gateway')).toContainEqual(
        expect.objectContaining({ target: port, published: 4001 }),
      );
      const test = service('hive-gateway').healthcheck?.test ?? [];
      const url = (Array.isArray(test) ? test : [test]).join(' ').match(/https?:\/\/\S+/)?.[0];
      expect(url).toBeDefined();
      const probed = new URL(url ?? 'missing:');
      expect(Number(probed.port || 80)).toBe(port);
      expect(['/healthcheck', '/readiness']).toContain(probed.pathname);
    });
  });

  describe('healthcheck scripts, run against the real services', () => {
    it("the simulator's (compose and simulator/Dockerfile) pass on the simulator and fail when it is down", async () => {
      const { SIMULATOR_PORT = '4010' } = environmentOf('simulator');
      const composeScript = nodeHealthcheckScript(service('simulator').healthcheck?.test);
      expect(composeScript).toContain(`:${SIMULATOR_PORT}/`);
      // The image's probe reads SIMULATOR_PORT, as the simulator does.
      const imageScript = nodeHealthcheckScript(dockerfileHealthcheck(SIMULATOR_DOCKERFILE));
      expect(imageScript).toContain('SIMULATOR_PORT');

      const simulator = await startSimulator();
      const port = new URL(simulator.statusBaseUrl).port;
      const scripts = [composeScript.replace(`:${SIMULATOR_PORT}/`, `:${port}/`), imageScript];
      try {
        for (const script of scripts) {
          expect(await runNode(script, { SIMULATOR_PORT: port })).toBe(0);
        }
      } finally {
        await simulator.close();
      }
      for (const script of scripts) {
        expect(await runNode(script, { SIMULATOR_PORT: port })).not.toBe(0);
      }
    });

    it("the gateway's (compose and Dockerfile) pass on the gateway and fail when it is down", async () => {
      const scripts = [
        nodeHealthcheckScript(service('gateway').healthcheck?.test),
        nodeHealthcheckScript(dockerfileHealthcheck()),
      ];
      const harness = await startHarness({ logLevel: 'silent' });
      const port = new URL(harness.origin).port;
      try {
        for (const script of scripts) expect(await runNode(script, { PORT: port })).toBe(0);
      } finally {
        await harness.close();
      }
      for (const script of scripts) expect(await runNode(script, { PORT: port })).not.toBe(0);
    });
  });
});

// --- Dockerfile and simulator/Dockerfile --------------------------------------------------------

/** The gateway's image: the one that ships. */
const GATEWAY_DOCKERFILE = 'Dockerfile';
/** The simulator's image, for the compose stack only. */
const SIMULATOR_DOCKERFILE = 'simulator/Dockerfile';

/** What the COPY instructions of a stage take from the build context (`--from` ones excluded). */
function contextCopySources(stage: DockerStage): string[] {
  return argsOf(stage, 'COPY')
    .map(parseCopy)
    .flatMap((copy) => (copy.from === undefined ? copy.sources : []));
}

/** Whether copying `source` (a context path, maybe a glob) can bring in anything under `dir`. */
function reaches(source: string, dir: string): boolean {
  const path = posix.normalize(source).replace(/\/$/, '');
  if (/[*?[]/.test(path)) return true;
  const down = posix.relative(path, dir);
  const up = posix.relative(dir, path);
  return !down.startsWith('..') || !up.startsWith('..');
}

/** The HEALTHCHECK's command, in compose's form: `["CMD", ...exec form]`. */
function dockerfileHealthcheck(path = GATEWAY_DOCKERFILE): string[] {
  const [healthcheck] = argsOf(finalStage(path), 'HEALTHCHECK');
  const command = /\bCMD\s+(\[.*\])\s*$/.exec(healthcheck ?? '')?.[1];
  expect(command, 'HEALTHCHECK … CMD ["node", "-e", …]').toBeDefined();
  return ['CMD', ...(JSON.parse(command ?? '[]') as string[])];
}

/** .dockerignore patterns, as regular expressions over context-relative paths. */
function dockerignore(): RegExp[] {
  return read('.dockerignore')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#') && !line.startsWith('!'))
    .map((pattern) => {
      const body = pattern
        .replace(/^\/+|\/+$/g, '')
        .split('/')
        .map((part) =>
          part === '**'
            ? '.*'
            : part
                .replace(/[.+^${}()|[\]\\]/g, '\\$&')
                .replace(/\*/g, '[^/]*')
                .replace(/\?/g, '.'),
        )
        .join('/');
      // A pattern also excludes everything below what it matches.
      return new RegExp(`^${body}(/.*)?$`);
    });
}

const isIgnored = (path: string) =>
  dockerignore().some((pattern) => pattern.test(posix.normalize(path).replace(/^\.\/|\/$/g, '')));

interface LockEntry {
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  peer?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/**
 * What `npm ci --omit=…` installs from package-lock.json, by npm's rule: a package goes when it is
 * dev and dev is omitted, optional and optional is, devOptional (reached both ways) and both are,
 * or peer and peer is. `dropped`: the optional packages of the production tree that go with it.
 */
function productionInstall(omit: Set<string | undefined>) {
  const { packages = {} } = JSON.parse(read('package-lock.json')) as {
    packages?: Record<string, LockEntry>;
  };
  const kept = new Map<string, LockEntry>();
  const dropped: string[] = [];
  for (const [path, entry] of Object.entries(packages)) {
    if (path === '') continue;
    const goes =
      (entry.dev === true && omit.has('dev')) ||
      (entry.optional === true && omit.has('optional')) ||
      (entry.devOptional === true && omit.has('dev') && omit.has('optional')) ||
      (entry.peer === true && omit.has('peer'));
    if (!goes) kept.set(path, entry);
    else if (entry.optional === true) dropped.push(path);
  }
  return { kept, dropped };
}

/** The JavaScript files of an installed package (its type declarations excluded). */
function runtimeFilesOf(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(c|m)?js$/.test(file) && !file.split(/[\\/]/).includes('node_modules'))
    .map((file) => join(dir, file));
}

/** Runs a Dockerfile's RUN command (shell form) in `cwd`, and resolves its exit code. */
function runShell(command: string, cwd: string): Promise<number | null> {
  return new Promise((done, reject) => {
    const child = spawn('sh', ['-c', command], { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => done(code));
  });
}

describe('Dockerfile', () => {
  it('has a build stage and a runtime stage, both on the Node major the tests run on', () => {
    // The `node` devDependency puts this major first on PATH for every npm script and test.
    const major = process.versions.node.split('.')[0];
    const pinned = JSON.parse(read('package.json')).devDependencies.node as string;
    expect(pinned).toMatch(new RegExp(`^\\^${major}\\.`));
    const stages = dockerfileStages();
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const names = new Set(stages.flatMap((stage) => (stage.name ? [stage.name] : [])));
    for (const { image } of stages) {
      if (names.has(image)) continue;
      expect(image).toMatch(
        new RegExp(`^node:${major}(\\.\\d+){0,2}(-[a-z]+)?-slim(@sha256:[0-9a-f]{64})?$`),
      );
    }
  });

  it('installs every dependency and compiles in the build stage', () => {
    const runs = dockerfileStages()
      .slice(0, -1)
      .flatMap((stage) => argsOf(stage, 'RUN'));
    expect(runs.some((run) => /\bnpm ci\b/.test(run) && !/--omit[= ]dev/.test(run))).toBe(true);
    expect(runs.some((run) => /\bnpm run build\b/.test(run))).toBe(true);
  });

  it('ships production dependencies, dist/ and schema.graphql in the final stage', () => {
    const stage = finalStage();
    const runs = argsOf(stage, 'RUN');
    expect(runs.some((run) => /\bnpm ci\b.*--omit[= ]dev/.test(run))).toBe(true);
    const copies = argsOf(stage, 'COPY');
    expect(copies.some((copy) => /--from=\S+\s+\S*dist\/?\s/.test(copy))).toBe(true);
    expect(copies.some((copy) => /\bschema\.graphql\b/.test(copy))).toBe(true);
    expect(argsOf(stage, 'ENV').join(' ')).toMatch(/\bNODE_ENV[= ]production\b/);
  });

  it('ships production dependencies only: what its npm ci installs from the lockfile has no dev package', () => {
    const [install] = argsOf(finalStage(), 'RUN').filter((run) => /\bnpm ci\b/.test(run));
    const omitted = new Set([...(install ?? '').matchAll(/--omit[= ](\w+)/g)].map((m) => m[1]));
    const { kept, dropped } = productionInstall(omitted);
    expect(kept.size).toBeGreaterThan(0);
    // TypeScript is a devDependency and an optional peer of `ox`: npm marks it devOptional and
    // keeps it unless both dev and optional are omitted (31 MB with its native compiler).
    for (const name of ['typescript', 'tsx', 'vitest', 'node', 'esbuild']) {
      expect(kept.has(`node_modules/${name}`), `${name} is installed`).toBe(false);
    }
    for (const [path, entry] of kept) {
      expect(entry.dev || entry.devOptional, `${path} is a dev package`).not.toBe(true);
    }
    // Every production dependency is there, with what it needs.
    const { dependencies = {} } = JSON.parse(read('package.json')) as {
      dependencies?: Record<string, string>;
    };
    for (const name of Object.keys(dependencies)) {
      expect(kept.has(`node_modules/${name}`), `${name} is not installed`).toBe(true);
    }
    // An optional package of the production tree the install drops must be one no code the
    // image runs loads: only type declarations may name it.
    for (const path of dropped) {
      const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
      for (const [dependent, entry] of kept) {
        const needs = { ...entry.dependencies, ...entry.optionalDependencies };
        if (!(name in needs)) continue;
        for (const file of runtimeFilesOf(join(ROOT, dependent))) {
          expect(readFileSync(file, 'utf8'), `${file} loads ${name}`).not.toMatch(
            new RegExp(`['"]${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}['"/]`),
          );
        }
      }
    }
  });

  it('runs as a user other than root', () => {
    const users = argsOf(finalStage(), 'USER');
    expect(users.length).toBeGreaterThan(0);
    expect(['root', '0', '0:0']).not.toContain(users.at(-1)?.split(':')[0]);
  });

  it('exposes 4000, starts the gateway and probes GET /health', () => {
    const stage = finalStage();
    expect(argsOf(stage, 'EXPOSE').join(' ').split(/\s+/)).toContain('4000');
    expect(argsOf(stage, 'CMD').join(' ')).toMatch(/dist\/main\.js/);
    expect(nodeHealthcheckScript(dockerfileHealthcheck())).toMatch(/\/health\b/);
  });

  it('holds the gateway alone: nothing of the simulator is copied or compiled', () => {
    // .dockerignore cannot keep simulator/ out (its own image builds from the same context), so no
    // COPY may reach it: not `simulator`, not `.`, not a glob.
    const sources = dockerfileStages().flatMap(contextCopySources);
    expect(sources).toContain('src');
    for (const source of sources) {
      expect(reaches(source, 'simulator'), `COPY ${source} reaches simulator/`).toBe(false);
    }
    for (const stage of dockerfileStages()) {
      for (const copy of argsOf(stage, 'COPY')) expect(copy).not.toMatch(/simulator/);
    }
    // What `npm run build` compiles into dist/: src/ alone.
    const build = JSON.parse(read('tsconfig.build.json')) as {
      include?: string[];
      files?: string[];
      compilerOptions?: { rootDir?: string; outDir?: string };
    };
    expect(build.include).toEqual(['src']);
    expect(build.files).toBeUndefined();
    expect(build.compilerOptions?.rootDir).toBe('src');
    expect(build.compilerOptions?.outDir).toBe('dist');
  });

  it('copies only files that exist and that .dockerignore leaves in the context', () => {
    const sources = dockerfileStages().flatMap(contextCopySources);
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      expect(isIgnored(source), `${source} is in .dockerignore`).toBe(false);
    }
  });
});

describe('simulator/Dockerfile', () => {
  const stages = () => dockerfileStages(SIMULATOR_DOCKERFILE);
  const stage = () => finalStage(SIMULATOR_DOCKERFILE);
  /** The build stage's esbuild command, and the file it writes. */
  const bundling = () => {
    const run = dockerfileStages(SIMULATOR_DOCKERFILE)
      .slice(0, -1)
      .flatMap((s) => argsOf(s, 'RUN'))
      .find((candidate) => /\besbuild\b/.test(candidate));
    expect(run, 'a build stage bundles the simulator with esbuild').toBeDefined();
    const outfile = /--outfile=(\S+)/.exec(run ?? '')?.[1];
    expect(outfile, 'esbuild --outfile=…').toBeDefined();
    return { run: run ?? '', outfile: outfile ?? '' };
  };

  it('has a build stage and a runtime stage, both on the Node major the tests run on', () => {
    const major = process.versions.node.split('.')[0];
    expect(stages().length).toBeGreaterThanOrEqual(2);
    const names = new Set(stages().flatMap((s) => (s.name ? [s.name] : [])));
    for (const { image } of stages()) {
      if (names.has(image)) continue;
      expect(image).toMatch(
        new RegExp(`^node:${major}(\\.\\d+){0,2}(-[a-z]+)?-slim(@sha256:[0-9a-f]{64})?$`),
      );
    }
  });

  it('bundles its sources in the build stage, and holds only the bundle: no node_modules, no second Node', () => {
    const { run } = bundling();
    expect(run).toMatch(/\bsimulator\/src\/main\.ts\b/);
    // Everything it imports goes into the bundle: nothing external is left to install.
    expect(run).toMatch(/--bundle\b/);
    expect(run).not.toMatch(/--packages=external|--external:/);
    expect(run).toMatch(/--platform=node\b/);
    // The runtime stage installs nothing and copies nothing but the build stage's bundle.
    expect(argsOf(stage(), 'RUN')).toEqual([]);
    expect(contextCopySources(stage())).toEqual([]);
    const copies = argsOf(stage(), 'COPY');
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatch(new RegExp(`^--from=\\S+\\s+\\S*${bundling().outfile}\\s+\\S+$`));
    expect(copies.join(' ')).not.toMatch(/node_modules/);
  });

  it('copies the manifests, tsconfig.json and simulator/ only: nothing of the gateway', () => {
    const sources = stages()
      .flatMap(contextCopySources)
      .map((source) => posix.normalize(source));
    expect(sources.sort()).toEqual(
      ['package-lock.json', 'package.json', 'simulator', 'tsconfig.json'].sort(),
    );
    for (const source of sources) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      // Both images build from the same context, so the simulator must stay in it.
      expect(isIgnored(source), `${source} is in .dockerignore`).toBe(false);
    }
    expect(isIgnored('simulator/src/main.ts')).toBe(false);
  });

  it('runs as a user other than root', () => {
    const users = argsOf(stage(), 'USER');
    expect(users.length).toBeGreaterThan(0);
    expect(['root', '0', '0:0']).not.toContain(users.at(-1)?.split(':')[0]);
  });

  it('starts the bundle with node, exposes its port and probes its health', () => {
    const [cmd] = argsOf(stage(), 'CMD');
    // Exec form with node itself, so SIGTERM reaches the simulator.
    expect(JSON.parse(cmd ?? '[]')).toEqual(['node', posix.basename(bundling().outfile)]);
    const { SIMULATOR_PORT = '4010' } = environmentOf('simulator');
    expect(argsOf(stage(), 'EXPOSE').join(' ').split(/\s+/)).toContain(SIMULATOR_PORT);
    expect(portsOf('simulator').map((port) => String(port.target))).toContain(SIMULATOR_PORT);
    expect(nodeHealthcheckScript(dockerfileHealthcheck(SIMULATOR_DOCKERFILE))).toMatch(
      /\/_simulator\/health\b/,
    );
  });

  it("builds a bundle that serves, alone in a folder as in the image, and passes the image's healthcheck", async () => {
    // The build stage's command as the Dockerfile writes it, in a copy of its context.
    const { run, outfile } = bundling();
    const context = mkdtempSync(join(tmpdir(), 'simulator-build-'));
    const image = mkdtempSync(join(tmpdir(), 'simulator-image-'));
    try {
      for (const path of ['package.json', 'tsconfig.json', 'simulator', 'node_modules']) {
        symlinkSync(join(ROOT, path), join(context, path));
      }
      expect(await runShell(run, context)).toBe(0);
      const bundle = join(image, posix.basename(outfile));
      copyFileSync(join(context, outfile), bundle);
      // The image's CMD, with a free port.
      const simulator = spawn(process.execPath, [bundle], {
        cwd: image,
        env: { ...process.env, SIMULATOR_HOST: '127.0.0.1', SIMULATOR_PORT: '0' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise<number | null>((done) => simulator.on('exit', done));
      try {
        let out = '';
        simulator.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
        });
        const port = await eventually(() => /127\.0\.0\.1:(\d+)\//.exec(out)?.[1]);
        const probe = nodeHealthcheckScript(dockerfileHealthcheck(SIMULATOR_DOCKERFILE));
        expect(await runNode(probe, { SIMULATOR_PORT: port })).toBe(0);
      } finally {
        simulator.kill('SIGTERM');
      }
      expect(await exited).toBe(0);
    } finally {
      rmSync(context, { recursive: true, force: true });
      rmSync(image, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('Dockerfile and simulator/Dockerfile, for both builders', () => {
  for (const path of [GATEWAY_DOCKERFILE, SIMULATOR_DOCKERFILE]) {
    it(`${path} names no frontend image and uses nothing the legacy builder lacks`, () => {
      const text = read(path);
      // A `# syntax=` (or `# escape=` after it) directive makes BuildKit pull a frontend image
      // before reading the file: an offline or mirrored build fails there.
      expect(text).not.toMatch(/^#\s*syntax\s*=/im);
      for (const stage of dockerfileStages(path)) {
        for (const { keyword, args } of stage.instructions) {
          // BuildKit only: RUN --mount/--network/--security, COPY --link/--parents/--exclude, heredocs.
          if (keyword === 'RUN') expect(args, `${path}: RUN ${args}`).not.toMatch(/^--/);
          if (keyword === 'COPY' || keyword === 'ADD') {
            expect(args, `${path}: ${keyword} ${args}`).not.toMatch(
              /--(link|parents|exclude|checksum|keep-git-dir)\b/,
            );
          }
          expect(args, `${path}: ${keyword} heredoc`).not.toMatch(/<<-?\s*["']?\w+["']?\s*$/);
        }
      }
    });
  }
});

describe('.dockerignore', () => {
  it('keeps installed and built files, git history and results out of the context', () => {
    for (const path of ['node_modules', 'node_modules/zod/package.json', 'dist', '.git']) {
      expect(isIgnored(path), path).toBe(true);
    }
    for (const path of ['coverage', 'bench/results']) expect(isIgnored(path), path).toBe(true);
  });
});
