import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { openRawSocket } from '../helpers/raw-socket.js';

const closedWithin = (closed: Promise<unknown>, ms: number) =>
  Promise.race([
    closed.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);

describe('connections', () => {
  let harness: Harness;
  let sockets: Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    sockets = [];
    await harness.close();
  });

  it('drains: finishes the request in flight with Connection: close, then takes none', async () => {
    harness = await startHarness();
    harness.simulator.setFault('status', '*', { kind: 'delay', ms: 400 });
    const inFlight = harness.execute('{ statusPage { name } }');
    // In flight once the feed has the gateway's request.
    await eventually(() => harness.simulator.requestCount() > 0);
    const drained = harness.drain(5_000);
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(answer.headers.get('connection')).toBe('close');
    await drained;
    await expect(harness.fetch('/health')).rejects.toThrow();
  });

  it('closes a connection whose headers never finish', async () => {
    harness = await startHarness({ env: { HTTP_HEADERS_TIMEOUT_MS: 300 } });
    const client = await openRawSocket(harness.origin);
    sockets.push(client.socket);
    client.socket.write('POST /graphql HTTP/1.1\r\nHost: x\r\n');
    expect(await closedWithin(client.closed, 5_000)).toBe(true);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('answers 408 to a body that trickles in, on the cached path too', async () => {
    harness = await startHarness({ env: { HTTP_REQUEST_TIMEOUT_MS: 400 } });
    const client = await openRawSocket(harness.origin);
    sockets.push(client.socket);
    client.socket.write(
      'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query"',
    );
    expect(await closedWithin(client.closed, 5_000)).toBe(true);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('refuses connections past HTTP_MAX_CONNECTIONS, and serves again once they close', async () => {
    harness = await startHarness({ env: { HTTP_MAX_CONNECTIONS: 2 } });
    const kept = [await openRawSocket(harness.origin), await openRawSocket(harness.origin)];
    sockets.push(...kept.map((client) => client.socket));
    const refused = await openRawSocket(harness.origin);
    sockets.push(refused.socket);
    expect(await closedWithin(refused.closed, 2_000)).toBe(true);
    for (const client of kept) client.socket.destroy();
    await Promise.all(kept.map((client) => client.closed));
    // The server counts a connection gone once it has seen it close.
    const health = await eventually(() => harness.fetch('/health').catch(() => undefined));
    expect(health.status).toBe(200);
  });
});
