import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../simulator/src/server.js';
import { eventually } from './helpers/eventually.js';
import { startOtlpReceiver } from './helpers/otlp-receiver.js';

/**
 * Starts a process the way the project does: `npm start` is scripts/start.ts over the built entry
 * (node runs it as it is), the Dockerfile's command is the entry alone (test/global-setup.ts
 * builds it).
 */
function start(command: 'npm start' | 'production entry', env: Record<string, string>) {
  const args = command === 'npm start' ? ['scripts/start.ts', 'dist/main.js'] : ['dist/main.js'];
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  return { child, lines, stderr: () => stderr };
}

/** Upstream URLs the configuration accepts; nothing answers there (nothing is asked before listening). */
const UPSTREAM_URLS = {
  HOST: '127.0.0.1',
  STATUS_BASE_URL: 'http://127.0.0.1:9/api/v2',
  VERIFY_BASE_URL: 'http://127.0.0.1:9',
};

/** A loopback port another server listens on. */
async function takePort(): Promise<{ port: number; close(): void }> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: () => server.close(),
  };
}

/** `eventually`, with the time a process started from source may take to say it is ready. */
const waitFor = <T>(probe: () => T | undefined) => eventually(probe, { timeoutMs: 15_000 });

const readyLine = (lines: Record<string, unknown>[]) =>
  lines.find((line) => /^GraphQL( and GraphiQL)? at /.test(String(line.msg)));

describe('npm start', () => {
  let child: ChildProcess | undefined;
  let simulator: Simulator | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await simulator?.close();
    simulator = undefined;
  });

  describe('with neither upstream set', { shuffle: false }, () => {
    /*
     * One process for these tests, in order: what it says first, what it serves, then how it stops
     * (the last test ends it), so never shuffled. Each start is a simulator and a gateway.
     */
    let started: ReturnType<typeof start>;
    let ready: Record<string, unknown>;
    beforeAll(async () => {
      started = start('npm start', { PORT: '0', HOST: '127.0.0.1' });
      ready = await waitFor(() => readyLine(started.lines));
    });
    afterAll(() => {
      if (started?.child.exitCode === null) started.child.kill('SIGKILL');
    });

    it('simulates both upstreams, says so first, and serves', async () => {
      expect(started.lines.slice(0, 2).map((line) => line.msg)).toEqual([
        expect.stringMatching(
          /^status feed: SIMULATED at http:\/\/127\.0\.0\.1:\d+\/status\/api\/v2 /,
        ),
        expect.stringMatching(/^verification service: SIMULATED at http:\/\/127\.0\.0\.1:\d+/),
      ]);
      expect(ready.msg).toBe(
        `GraphQL and GraphiQL at ${ready.url}; introspection on; metrics at ${new URL(String(ready.url)).origin}/metrics; tracing off`,
      );

      const response = await fetch(String(ready.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: '{ statusPage { name components(topLevel: true) { name } } }',
        }),
      });
      const body = (await response.json()) as { data: { statusPage: { components: unknown[] } } };
      expect(body.data.statusPage.components.length).toBeGreaterThan(0);
    });

    it('serves several simulated pages when no page is configured, one of them incident.io-shaped', async () => {
      const response = await fetch(String(ready.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query:
            '{ statusPages { slug name components { id status } } statusOverview { indicator } }',
        }),
      });
      const body = (await response.json()) as {
        data: { statusPages: { slug: string; components: { id: string }[] }[] };
        errors?: unknown;
      };
      expect(body.errors).toBeUndefined();
      expect(body.data.statusPages.map((page) => page.slug)).toEqual([
        'ledger',
        'cloud',
        'ai-vendor',
      ]);
      const vendor = body.data.statusPages[2];
      // ULIDs: 26 characters of Crockford's base 32.
      expect(vendor?.components.every(({ id }) => /^[0-9A-HJKMNP-TV-Z]{26}$/.test(id))).toBe(true);
    });

    it('finishes in-flight operations on SIGTERM, then exits 0', async () => {
      const { child } = started;
      const simulatorOrigin = new URL(String(started.lines[0]?.url)).origin;
      await fetch(`${simulatorOrigin}/_simulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ upstream: 'status', path: '*', fault: { kind: 'delay', ms: 800 } }),
      });

      const upstreamRequests = async () => {
        const requests = await fetch(`${simulatorOrigin}/_simulator/requests`);
        return ((await requests.json()) as { count: number }).count;
      };
      const before = await upstreamRequests();
      // The incident history, which the tests before did not ask for: the gateway asks upstream.
      const inFlight = fetch(String(ready.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ statusPage { name incidentHistory { id } } }' }),
      });
      // In flight once the simulator has the gateway's request for the history.
      await eventually(async () => (await upstreamRequests()) > before);
      child.kill('SIGTERM');

      const response = await inFlight;
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        data: { statusPage: { name: string; incidentHistory: { id: string }[] } };
      };
      expect(body.data.statusPage.name).toBeTruthy();
      expect(body.data.statusPage.incidentHistory.length).toBeGreaterThan(0);
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    });
  });

  it('says exactly which upstream is real and which simulated', async () => {
    simulator = await startSimulator();
    const started = start('npm start', {
      PORT: '0',
      HOST: '127.0.0.1',
      STATUS_BASE_URL: simulator.statusBaseUrl,
    });
    child = started.child;
    const ready = await waitFor(() => readyLine(started.lines));
    const [status, verification] = started.lines;
    expect(status).toMatchObject({
      upstream: 'status feed',
      simulated: false,
      url: simulator.statusBaseUrl,
    });
    expect(verification).toMatchObject({ upstream: 'verification service', simulated: true });
    expect(verification?.url).not.toBe(simulator.verifyBaseUrl);
    expect(ready.statusFeed).toBe(simulator.statusBaseUrl);
    expect(ready.verificationService).toBe(`${String(verification?.url)} (auto)`);
  });

  it('simulates nothing in production: the gateway refuses to start without its upstreams', async () => {
    const started = start('npm start', { PORT: '0', NODE_ENV: 'production' });
    child = started.child;
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(started.lines).toEqual([]);
    expect(started.stderr()).toContain('STATUS_BASE_URL is required');
    expect(started.stderr()).toContain('VERIFY_BASE_URL is required');
  });
});

describe('the production entry', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('exits 1 naming each missing upstream variable under NODE_ENV=production', async () => {
    const started = start('production entry', {
      NODE_ENV: 'production',
      VERIFY_BASE_URL: 'https://sourcify.example/server',
    });
    child = started.child;
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(started.stderr()).toContain('STATUS_BASE_URL is required');
    expect(started.stderr()).not.toContain('VERIFY_BASE_URL');
  });

  it('exits 1 and lists every configuration problem, each naming its variable', async () => {
    const started = start('production entry', {
      PORT: 'x',
      STATUS_BASE_URL: 'nope',
      NODE_ENV: 'prod',
    });
    child = started.child;
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(started.stderr()).toContain('PORT must be a whole number');
    expect(started.stderr()).toContain('STATUS_BASE_URL must be an http(s) URL');
    expect(started.stderr()).toContain('NODE_ENV must be one of development, production, test');
    expect(started.stderr()).toContain('VERIFY_BASE_URL is required');
  });

  it('says what is on, serves /metrics on METRICS_PORT alone, explains itself to browsers and exports its last spans on SIGTERM', async () => {
    const simulator = await startSimulator();
    const collector = await startOtlpReceiver();
    try {
      const started = start('production entry', {
        NODE_ENV: 'production',
        PORT: '0',
        METRICS_PORT: '0',
        HOST: '127.0.0.1',
        STATUS_BASE_URL: simulator.statusBaseUrl,
        VERIFY_BASE_URL: simulator.verifyBaseUrl,
        OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.endpoint}/`,
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20s3cr3t-t0ken',
        // Nothing is exported before shutdown: what arrives is the last flush.
        OTEL_BSP_SCHEDULE_DELAY: '60000',
      });
      child = started.child;
      const ready = await waitFor(() => readyLine(started.lines));
      const api = new URL(String(ready.url)).origin;
      const metricsUrl = String(ready.metrics);
      expect(new URL(metricsUrl).port).not.toBe(new URL(api).port);
      expect(ready).toMatchObject({
        environment: 'production',
        graphiql: false,
        introspection: false,
        cors: 'same-origin only',
        tracing: `${collector.endpoint}/v1/traces`,
      });
      expect(ready.msg).toBe(
        `GraphQL at ${ready.url} (GraphiQL off); introspection off; metrics at ${metricsUrl}; traces to ${collector.endpoint}/v1/traces`,
      );
      expect(JSON.stringify(started.lines)).not.toContain('s3cr3t-t0ken');

      expect((await fetch(`${api}/metrics`)).status).toBe(404);
      const scrape = await fetch(metricsUrl);
      expect(scrape.status).toBe(200);
      expect(await scrape.text()).toContain('process_resident_memory_bytes');
      expect((await fetch(new URL('/graphql', metricsUrl))).status).toBe(404);

      const browser = await fetch(String(ready.url), { headers: { accept: 'text/html' } });
      expect(browser.status).toBe(406);
      expect(await browser.text()).toContain('GraphiQL is turned off');

      expect((await fetch(`${api}/readiness`)).status).toBe(200);
      expect(collector.spans).toEqual([]);
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
      expect(collector.spans.map((span) => span.name)).toContain('GET /graphql');
      expect(collector.authorizations).toContain('Bearer s3cr3t-t0ken');
    } finally {
      await simulator.close();
      await collector.close();
    }
  });

  it('says in one line, naming PORT, that the port is in use', async () => {
    const taken = await takePort();
    try {
      const started = start('production entry', { ...UPSTREAM_URLS, PORT: String(taken.port) });
      child = started.child;
      const [code] = await once(child, 'exit');
      expect(code).toBe(1);
      const fatal = started.lines.filter((line) => line.level === 60);
      expect(fatal).toEqual([
        expect.objectContaining({
          msg: `PORT ${taken.port} is in use by another process: stop it, or set PORT to a free port`,
          PORT: taken.port,
          code: 'EADDRINUSE',
        }),
      ]);
      expect(fatal[0]).not.toHaveProperty('err');
      expect(started.stderr()).toBe('');
    } finally {
      taken.close();
    }
  });

  it.each([
    ['development', 'readable lines'],
    ['production', 'JSON'],
  ])('writes, in a terminal under NODE_ENV=%s, %s', async (environment, format) => {
    const taken = await takePort();
    try {
      // `script` gives the entry a terminal for its stdout, and exits with its code.
      const terminal = spawn('script', ['-qfec', `${process.execPath} dist/main.js`, '/dev/null'], {
        env: {
          PATH: process.env.PATH ?? '',
          ...UPSTREAM_URLS,
          PORT: String(taken.port),
          NODE_ENV: environment,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = terminal;
      let output = '';
      terminal.stdout.on('data', (chunk) => {
        output += String(chunk);
      });
      const [code] = await once(terminal, 'exit');
      expect(code).toBe(1);
      const lines = stripVTControlCharacters(output).trim().split(/\r?\n/);
      const message = `PORT ${taken.port} is in use by another process: stop it, or set PORT to a free port`;
      expect(lines).toEqual([
        format === 'JSON'
          ? expect.stringMatching(/^\{"level":60,/)
          : `${lines[0]?.slice(0, 12)} FATAL ${message} PORT=${taken.port} code=EADDRINUSE`,
      ]);
      if (format === 'JSON') expect(JSON.parse(lines[0] ?? '')).toMatchObject({ msg: message });
      else expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} /);
    } finally {
      taken.close();
    }
  });

  it.each([
    [
      'a misspelt key, naming the key it resembles',
      'pages:\n  - slug: ledger\n    baseURL: https://status.example.com/api/v2\n',
      ['STATUS_PAGES_FILE pages[0] has unknown key baseURL: did you mean baseUrl?'],
    ],
    [
      'a YAML error, showing the line it points at',
      'pages:\n  - slug: ledger\n    baseUrl: https://status.example.com/api/v2\n - slug: cloud\n',
      [
        expect.stringMatching(
          /^STATUS_PAGES_FILE .*status-pages\.yaml cannot be parsed: .* at line 4, column 1: " - slug: cloud"$/,
        ),
      ],
    ],
    [
      "an empty list of pages, in the file's terms",
      'pages: []\n',
      ['STATUS_PAGES_FILE pages lists no page: list one at least'],
    ],
  ])('exits 1 on STATUS_PAGES_FILE with %s', async (_, text, problems) => {
    const file = join(mkdtempSync(join(tmpdir(), 'status-pages-')), 'status-pages.yaml');
    writeFileSync(file, text);
    const started = start('production entry', {
      STATUS_PAGES_FILE: file,
      VERIFY_BASE_URL: 'http://127.0.0.1:9',
    });
    child = started.child;
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    // "Invalid configuration:", then a line per problem.
    const listed = started.stderr().trimEnd().split('\n').slice(1);
    expect(listed.map((line) => line.replace(/^ {2}- /, ''))).toEqual(problems);
  });

  it('imports nothing from the simulator', () => {
    const sources = (readdirSync('src', { recursive: true }) as string[])
      .filter((file) => file.endsWith('.ts'))
      .map((file) => join('src', file));
    expect(sources.length).toBeGreaterThan(20);
    for (const file of sources) {
      expect(readFileSync(file, 'utf8'), file).not.toMatch(/from '[./]*simulator\//);
    }
  });
});
