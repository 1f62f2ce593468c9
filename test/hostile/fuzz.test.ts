import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../simulator/src/server.js';

/*
 * Random requests against the production entry (`dist/main.js`, NODE_ENV=production) in its own
 * process: representations, variables, bodies and headers drawn from a seeded generator, so a
 * failure replays. Whatever arrives, the process stays up and every answer is a client error or a
 * success, never a 500.
 */

/** mulberry32: small, seeded, good enough to draw inputs. */
function random(seed: number) {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  return { next, int, pick };
}

const ODD_VALUES: readonly unknown[] = [
  null,
  true,
  0,
  -1,
  1e308,
  Number.MAX_SAFE_INTEGER,
  '',
  ' ',
  '\u0000',
  '0x',
  '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
  'x'.repeat(5_000),
  '__proto__',
  'constructor',
  [],
  {},
  { __proto__: { polluted: true } },
  [[[[[]]]]],
  { toString: 'x' },
];

function oddValue(r: ReturnType<typeof random>, depth = 0): unknown {
  const roll = r.int(6);
  if (roll === 0 && depth < 3)
    return Array.from({ length: r.int(4) }, () => oddValue(r, depth + 1));
  if (roll === 1 && depth < 3) {
    return Object.fromEntries(
      Array.from({ length: r.int(4) }, () => [
        r.pick(['__typename', 'id', 'chainId', 'address', 'apiKey', 'x', '__proto__']),
        oddValue(r, depth + 1),
      ]),
    );
  }
  return r.pick(ODD_VALUES);
}

const DOCUMENTS = [
  'query ($r: [_Any!]!) { _entities(representations: $r) { __typename ... on Component { name } ... on Contract { verified } } }',
  'mutation ($input: VerifyContractInput!) { verifyContract(input: $input) { __typename } }',
  'query ($id: ID!) { component(id: $id) { name } incident(id: $id) { name } verificationJob(id: $id) { __typename } }',
  'query ($chainId: String!, $address: String!) { contract(chainId: $chainId, address: $address) { verified } }',
  'query ($s: [ComponentStatus!]) { statusPage { components(status: $s) { id } } }',
  '{ statusPage { name } }',
];
const CONTENT_TYPES = [
  'application/json',
  'application/graphql',
  'application/json; charset=latin1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  '',
];

/** A header value fetch will send: odd, but made of visible characters. */
/** Any drawn value as text, whatever its prototype says. */
const text = (value: unknown): string =>
  typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');

const headerValue = (value: unknown, max: number) =>
  text(value)
    .slice(0, max)
    .replace(/[^\x21-\x7e]/g, '_') || '_';

function request(r: ReturnType<typeof random>): { init: RequestInit; path: string } {
  const headers: Record<string, string> = {};
  const kind = r.int(5);
  if (r.int(3) === 0) headers['x-request-id'] = headerValue(oddValue(r), 300);
  if (r.int(3) === 0) headers.cookie = `verify_session=${headerValue(oddValue(r), 200)}`;
  if (r.int(4) === 0) headers.accept = r.pick(['text/event-stream', 'multipart/mixed', '*/*', 'x']);
  if (r.int(4) === 0) headers['x-forwarded-for'] = headerValue(oddValue(r), 100);
  if (kind === 0) {
    const query = encodeURIComponent(r.pick(DOCUMENTS));
    const variables = encodeURIComponent(JSON.stringify(oddValue(r)) ?? 'x');
    return { path: `/graphql?query=${query}&variables=${variables}`, init: { headers } };
  }
  const contentType = r.pick(CONTENT_TYPES);
  if (contentType) headers['content-type'] = contentType;
  let body: string;
  if (kind === 1) body = text(oddValue(r));
  else if (kind === 2) body = JSON.stringify(oddValue(r)) ?? 'null';
  else {
    body = JSON.stringify({
      query: r.pick(DOCUMENTS),
      variables: {
        r: oddValue(r),
        input: oddValue(r),
        id: oddValue(r),
        chainId: oddValue(r),
        address: oddValue(r),
        s: oddValue(r),
      },
      operationName: r.int(5) === 0 ? oddValue(r) : undefined,
    });
  }
  return { path: '/graphql', init: { method: 'POST', headers, body } };
}

describe('fuzzing the production entry', () => {
  let simulator: Simulator;
  let gateway: ChildProcess;
  let origin: string;
  let stderr = '';

  beforeAll(async () => {
    simulator = await startSimulator();
    gateway = spawn(process.execPath, ['dist/main.js'], {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        STATUS_BASE_URL: simulator.statusBaseUrl,
        VERIFY_BASE_URL: simulator.verifyBaseUrl,
        VERIFY_API: 'v2',
        VERIFY_RATE_LIMIT: '100000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    gateway.stderr?.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const lines = createInterface({ input: gateway.stdout as NodeJS.ReadableStream });
    origin = await new Promise<string>((resolve) => {
      lines.on('line', (line) => {
        const { url } = JSON.parse(line) as { url?: string };
        if (url) {
          lines.close();
          gateway.stdout?.resume();
          resolve(new URL(url).origin);
        }
      });
    });
  });
  afterAll(async () => {
    gateway.kill('SIGKILL');
    await simulator.close();
  });

  it('stays up and never answers 500, whatever 600 random requests hold', async () => {
    const r = random(20261123);
    const statuses = new Map<number, number>();
    for (let i = 0; i < 600; i += 1) {
      const { path, init } = request(r);
      const response = await fetch(`${origin}${path}`, init);
      await response.arrayBuffer();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      expect(
        response.status,
        `request ${i}: ${init.method ?? 'GET'} ${path} ${text(init.body).slice(0, 300)}`,
      ).toBeLessThan(500);
    }
    expect(gateway.exitCode).toBeNull();
    expect((await fetch(`${origin}/health`)).status).toBe(200);
    expect(stderr).toBe('');
    // Both kinds of answer were drawn: the generator reaches past the front door.
    expect(statuses.get(200)).toBeGreaterThan(50);
    expect(statuses.get(400)).toBeGreaterThan(50);
  });

  it('exits only when told to', async () => {
    gateway.kill('SIGTERM');
    const [code] = await once(gateway, 'exit');
    expect(code).toBe(0);
  });
});
