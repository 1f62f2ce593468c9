import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { eventually } from '../helpers/eventually.js';
import { extraListeners } from '../helpers/extra-listeners.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { pagePath, withOwnPages } from '../helpers/own-pages.js';
import { openRawSocket } from '../helpers/raw-socket.js';

const closedWithin = (closed: Promise<unknown>, ms: number) =>
  Promise.race([
    closed.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);

/** The page the drained request reads: one of its own, so that its read goes to the feed. */
const IN_FLIGHT = 'in-flight';

/*
 * One gateway; each test has a production listener of its own in front of it, with its own
 * `HTTP_*` settings (they are the listener's), and counts or drains only that one.
 */
describe('connections', () => {
  let harness: Harness;
  const listeners = extraListeners();
  let sockets: Socket[] = [];
  beforeAll(async () => {
    harness = await startHarness(withOwnPages({ [IN_FLIGHT]: createSimulatedFeed() }));
  });
  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    sockets = [];
    harness.simulator.clearFaults();
    await listeners.close();
  });
  afterAll(() => harness.close());

  it('drains: finishes the request in flight with Connection: close, then takes none', async () => {
    const listener = await listeners.listen(harness);
    harness.simulator.setFault('status', '*', { kind: 'delay', ms: 400 });
    const inFlight = fetch(`${listener.origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: `{ statusPage(slug: "${IN_FLIGHT}") { name } }` }),
    });
    // In flight once the feed has the gateway's request.
    await eventually(
      () => harness.simulator.requestCount(pagePath(IN_FLIGHT, '/summary.json')) > 0,
    );
    const drained = listener.drain(5_000);
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(answer.headers.get('connection')).toBe('close');
    expect(await answer.json()).toMatchObject({
      data: { statusPage: { name: expect.any(String) } },
    });
    await drained;
    await expect(fetch(`${listener.origin}/health`)).rejects.toThrow();
  });

  it('closes a connection whose headers never finish', async () => {
    const listener = await listeners.listen(harness, { HTTP_HEADERS_TIMEOUT_MS: 300 });
    const client = await openRawSocket(listener.origin);
    sockets.push(client.socket);
    client.socket.write('POST /graphql HTTP/1.1\r\nHost: x\r\n');
    expect(await closedWithin(client.closed, 5_000)).toBe(true);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('answers 408 to a body that trickles in, on the cached path too', async () => {
    const listener = await listeners.listen(harness, { HTTP_REQUEST_TIMEOUT_MS: 400 });
    const client = await openRawSocket(listener.origin);
    sockets.push(client.socket);
    client.socket.write(
      'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query"',
    );
    expect(await closedWithin(client.closed, 5_000)).toBe(true);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('refuses connections past HTTP_MAX_CONNECTIONS, and serves again once they close', async () => {
    const listener = await listeners.listen(harness, { HTTP_MAX_CONNECTIONS: 2 });
    const kept = [await openRawSocket(listener.origin), await openRawSocket(listener.origin)];
    sockets.push(...kept.map((client) => client.socket));
    const refused = await openRawSocket(listener.origin);
    sockets.push(refused.socket);
    expect(await closedWithin(refused.closed, 2_000)).toBe(true);
    for (const client of kept) client.socket.destroy();
    await Promise.all(kept.map((client) => client.closed));
    // The server counts a connection gone once it has seen it close.
    const health = await eventually(() =>
      fetch(`${listener.origin}/health`).catch(() => undefined),
    );
    expect(health.status).toBe(200);
  });
});
