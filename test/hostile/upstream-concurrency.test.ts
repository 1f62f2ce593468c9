import { createServer, request, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../simulator/src/server.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { listen } from '../helpers/listen.js';

/** A pass-through in front of the verification service that counts requests in flight. */
function countingProxy(target: URL) {
  let inFlight = 0;
  let most = 0;
  const server = createServer((req, res) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    const forward = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: `${target.pathname}${req.url}`,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('end', () => {
          inFlight -= 1;
        });
      },
    );
    req.pipe(forward);
  });
  return { server, most: () => most };
}

describe('requests in flight to one upstream', () => {
  let simulator: Simulator;
  let proxy: ReturnType<typeof countingProxy>;
  let server: Server;
  let harness: Harness;

  beforeAll(async () => {
    simulator = await startSimulator();
    proxy = countingProxy(new URL(simulator.verifyBaseUrl));
    server = proxy.server;
    const { origin } = await listen(server);
    harness = await startHarness({
      env: {
        VERIFY_BASE_URL: origin,
        UPSTREAM_MAX_CONCURRENT_REQUESTS: 4,
        UPSTREAM_TIMEOUT_MS: 5_000,
      },
    });
  });
  afterAll(async () => {
    await harness.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await simulator.close();
  });

  it('are capped by UPSTREAM_MAX_CONCURRENT_REQUESTS, however many one request fans out to', async () => {
    simulator.setFault('verify', '*', { kind: 'delay', ms: 30 });
    const representations = Array.from({ length: 60 }, (_, i) => ({
      __typename: 'Contract',
      chainId: '1',
      address: `0x${(i + 1).toString(16).padStart(40, '0')}`,
    }));
    const { body } = await harness.execute(
      'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Contract { verified } } }',
      { r: representations },
    );
    simulator.clearFaults();
    expect(body.errors).toBeUndefined();
    expect((body.data as { _entities: unknown[] })._entities).toHaveLength(60);
    expect(proxy.most()).toBeGreaterThan(1);
    expect(proxy.most()).toBeLessThanOrEqual(4);
  });
});
