/**
 * The images' and the stack's healthchecks poll `/health` every 10 s for the life of each container
 * (an orchestrator polls `/readiness` as often): their request lines must not bury the clients' at
 * `info`. Replayed through the production listener; the lines are the listener's alone, so each
 * gateway runs in process, with no upstream (`/readiness` answers 200 and reports the feed
 * unavailable, a probe that passes all the same).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type InProcessGateway, startInProcess } from '../helpers/in-process.js';

/** The request lines of `path` logged since `from` (an index of `gateway.logs`). */
const requestLines = (gateway: InProcessGateway, path: string, from = 0) =>
  gateway.logs.slice(from).filter((line) => line.msg === 'request' && line.path === path);

/** pino's levels, as the lines carry them. */
const DEBUG = 20;
const INFO = 30;
const ERROR = 50;

describe('request lines of healthcheck probes', () => {
  // At debug, every line is kept with its level: what a gateway at info (production's) drops shows.
  let gateway: InProcessGateway;
  beforeAll(() => {
    gateway = startInProcess({ logLevel: 'debug' });
  });
  afterAll(() => gateway?.close());

  it('logs a passing GET /health and /readiness at debug only, and /graphql at info', async () => {
    const from = gateway.logs.length;
    for (const path of ['/health', '/readiness', '/health']) {
      expect((await gateway.request(path)).status, path).toBe(200);
    }
    const { status } = await gateway.execute('query Banner { __typename }');
    expect(status).toBe(200);

    // Lines are written in the order the answers are: once /graphql's is there, so are the probes'.
    const [graphql] = await eventually(() => {
      const lines = requestLines(gateway, '/graphql', from);
      return lines.length > 0 && lines;
    });
    expect(graphql).toMatchObject({
      level: INFO,
      method: 'POST',
      status: 200,
      operation: 'Banner',
    });
    // Below info: a gateway logging at info writes none of them.
    expect(requestLines(gateway, '/health', from).map((line) => line.level)).toEqual([
      DEBUG,
      DEBUG,
    ]);
    expect(requestLines(gateway, '/readiness', from).map((line) => line.level)).toEqual([DEBUG]);
  });

  it('still writes the probe lines at debug, for whoever asks for them', async () => {
    const from = gateway.logs.length;
    expect((await gateway.request('/health')).status).toBe(200);
    const [line] = await eventually(() => {
      const lines = requestLines(gateway, '/health', from);
      return lines.length > 0 && lines;
    });
    expect(line).toMatchObject({ level: DEBUG, method: 'GET', status: 200 });
  });
});

describe('request lines of failing probes', () => {
  // Its own gateway, which it shuts down.
  it('keeps the line of everything else, and of a probe that fails', async () => {
    const gateway = startInProcess({ logLevel: 'info' });
    try {
      expect((await gateway.request('/metrics')).status).toBe(200);
      expect((await gateway.request('/no-such-path')).status).toBe(404);
      // Shutting down: /readiness answers 503, a 5xx, whose line is an error's.
      gateway.gateway.quiesce();
      expect((await gateway.request('/readiness')).status).toBe(503);

      await eventually(() => requestLines(gateway, '/readiness').length > 0);
      expect(requestLines(gateway, '/readiness')[0]).toMatchObject({ level: ERROR, status: 503 });
      expect(requestLines(gateway, '/metrics')[0]).toMatchObject({ level: INFO, status: 200 });
      expect(requestLines(gateway, '/no-such-path')[0]).toMatchObject({
        level: INFO,
        status: 404,
      });
    } finally {
      await gateway.close();
    }
  });
});
