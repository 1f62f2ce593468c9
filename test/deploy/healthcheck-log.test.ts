/**
 * The images' and the stack's healthchecks poll `/health` every 10 s for the life of each container
 * (an orchestrator polls `/readiness` as often): their request lines must not bury the clients' at
 * `info`. Replayed through the production listener on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';

/** The request lines of `path` logged since `from` (an index of `harness.logs`). */
const requestLines = (harness: Harness, path: string, from = 0) =>
  harness.logs.slice(from).filter((line) => line.msg === 'request' && line.path === path);

/** pino's levels, as the lines carry them. */
const DEBUG = 20;
const INFO = 30;
const ERROR = 50;

describe('request lines of healthcheck probes', () => {
  // At debug, every line is kept with its level: what a gateway at info (production's) drops shows.
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ logLevel: 'debug' });
  });
  afterAll(() => harness?.close());

  it('logs a passing GET /health and /readiness at debug only, and /graphql at info', async () => {
    const from = harness.logs.length;
    for (const path of ['/health', '/readiness', '/health']) {
      expect((await harness.fetch(path)).status, path).toBe(200);
    }
    const { status } = await harness.execute('query Banner { statusPage { name } }');
    expect(status).toBe(200);

    // Lines are written in the order the answers are: once /graphql's is there, so are the probes'.
    const [graphql] = await eventually(() => {
      const lines = requestLines(harness, '/graphql', from);
      return lines.length > 0 && lines;
    });
    expect(graphql).toMatchObject({
      level: INFO,
      method: 'POST',
      status: 200,
      operation: 'Banner',
    });
    // Below info: a gateway logging at info writes none of them.
    expect(requestLines(harness, '/health', from).map((line) => line.level)).toEqual([
      DEBUG,
      DEBUG,
    ]);
    expect(requestLines(harness, '/readiness', from).map((line) => line.level)).toEqual([DEBUG]);
  });

  it('still writes the probe lines at debug, for whoever asks for them', async () => {
    const from = harness.logs.length;
    expect((await harness.fetch('/health')).status).toBe(200);
    const [line] = await eventually(() => {
      const lines = requestLines(harness, '/health', from);
      return lines.length > 0 && lines;
    });
    expect(line).toMatchObject({ level: DEBUG, method: 'GET', status: 200 });
  });
});

describe('request lines of failing probes', () => {
  // Its own gateway, which it shuts down.
  it('keeps the line of everything else, and of a probe that fails', async () => {
    const harness = await startHarness({ logLevel: 'info' });
    try {
      expect((await harness.fetch('/metrics')).status).toBe(200);
      expect((await harness.fetch('/no-such-path')).status).toBe(404);
      // Shutting down: /readiness answers 503, a 5xx, whose line is an error's.
      harness.gateway.quiesce();
      expect((await harness.fetch('/readiness')).status).toBe(503);

      await eventually(() => requestLines(harness, '/readiness').length > 0);
      expect(requestLines(harness, '/readiness')[0]).toMatchObject({ level: ERROR, status: 503 });
      expect(requestLines(harness, '/metrics')[0]).toMatchObject({ level: INFO, status: 200 });
      expect(requestLines(harness, '/no-such-path')[0]).toMatchObject({ level: INFO, status: 404 });
    } finally {
      await harness.close();
    }
  });
});
