import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';

/** Starts `src/index.ts` the way `npm start` does, minus the build step. */
function start(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/index.ts'], {
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

async function waitFor<T>(probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the gateway process', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('starts with no configuration, says it uses the simulator first, serves, and stops on SIGTERM', async () => {
    const started = start({ PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'production' });
    child = started.child;
    const ready = await waitFor(() =>
      started.lines.find((line) => String(line.msg).startsWith('GraphQL and GraphiQL at')),
    );
    expect(String(started.lines[0]?.msg)).toContain('built-in simulator');
    const url = String(ready.msg).replace('GraphQL and GraphiQL at ', '');

    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: '{ statusPage { name components(topLevel: true) { name } } }',
      }),
    });
    const body = (await response.json()) as { data: { statusPage: { components: unknown[] } } };
    expect(body.data.statusPage.components.length).toBeGreaterThan(0);

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it('finishes in-flight operations on SIGTERM before it exits', async () => {
    const started = start({ PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'production' });
    child = started.child;
    const ready = await waitFor(() =>
      started.lines.find((line) => String(line.msg).startsWith('GraphQL and GraphiQL at')),
    );
    const url = String(ready.msg).replace('GraphQL and GraphiQL at ', '');
    const simulatorOrigin = new URL(String(started.lines[0]?.statusBaseUrl)).origin;
    await fetch(`${simulatorOrigin}/_simulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ upstream: 'status', path: '*', fault: { kind: 'delay', ms: 800 } }),
    });

    const inFlight = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ statusPage { name } }' }),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    child.kill('SIGTERM');

    const response = await inFlight;
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { statusPage: { name: string } } };
    expect(body.data.statusPage.name).toBeTruthy();
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it('exits 1 and lists every configuration problem', async () => {
    const started = start({ PORT: 'x', STATUS_BASE_URL: 'nope' });
    child = started.child;
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(started.stderr()).toContain('PORT must be a number');
    expect(started.stderr()).toContain('STATUS_BASE_URL is not an http(s) URL');
  });
});
