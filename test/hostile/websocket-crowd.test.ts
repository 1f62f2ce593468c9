import { afterAll, afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventually } from '../helpers/eventually.js';
import { extraListeners } from '../helpers/extra-listeners.js';
import type { Harness } from '../helpers/harness.js';
import { sharedHarnesses } from '../helpers/shared-harness.js';
import { closeOf, initialise, openSocket } from '../helpers/subscriptions.js';

/*
 * Finding: 1,000 idle, acknowledged graphql-ws sockets from one client, kept alive forever by the
 * server's pings, took every connection: other clients got ECONNRESET and GET /health failed. Now
 * a client holds at most MAX_WEBSOCKETS_PER_CLIENT sockets, all of them at most MAX_WEBSOCKETS
 * (below HTTP_MAX_CONNECTIONS), a socket without an operation is closed after
 * WEBSOCKET_IDLE_TIMEOUT_MS, and one that never sends connection_init after 3 s.
 */

/*
 * One gateway, behind a proxy: HTTP_MAX_CONNECTIONS of 40 (its own listener's cap, and
 * MAX_WEBSOCKETS of 30) and 10 sockets a client. The crowd of 200 from one client comes through a
 * listener of its own, with the connection cap as it ships: 40 would drop most of them before
 * their handshake, and the 10 it admits are far from MAX_WEBSOCKETS. The idle timeout, 4 s, is
 * longer than a socket without connection_init is given (3 s, whose close comes first) and than
 * the caps' crowds take to open, whose idle sockets it would close.
 */
const IDLE_TIMEOUT_MS = 4_000;
const harnesses = sharedHarnesses();
const listeners = extraListeners();
const capped = () =>
  harnesses.use({
    env: {
      TRUSTED_PROXIES: 1,
      HTTP_MAX_CONNECTIONS: 40,
      MAX_WEBSOCKETS_PER_CLIENT: 10,
      WEBSOCKET_IDLE_TIMEOUT_MS: IDLE_TIMEOUT_MS,
      SUBSCRIPTION_KEEP_ALIVE_MS: 200,
    },
    logLevel: 'info',
  });

const logged = (harness: Harness, msg: string) =>
  harness.logs.filter((line) => line.msg === msg).length;
let used: Harness | undefined;
const opened: WebSocket[] = [];
afterEach(async () => {
  for (const socket of opened.splice(0)) socket.terminate();
  // Every socket's slot given back (it is, before its close is logged): the next test's caps
  // count its own sockets alone.
  const harness = used;
  if (harness) {
    await eventually(
      () => logged(harness, 'websocket closed') === logged(harness, 'websocket opened'),
    );
  }
  used = undefined;
  await listeners.close();
});
afterAll(() => harnesses.close());

type Handshake =
  | { readonly socket: WebSocket; readonly status: 101 }
  | { readonly socket?: undefined; readonly status: number; readonly body: unknown };

/**
 * Opens a socket to `origin` as `client` (the proxy-appended address) and acknowledges it, or its
 * refusal.
 */
async function connect(origin: string, client: string, init = true): Promise<Handshake> {
  const answer = await openSocket(origin, { headers: { 'x-forwarded-for': client } });
  if (!answer.socket) return { status: answer.status, body: JSON.parse(answer.body) };
  opened.push(answer.socket);
  if (init) await initialise(answer.socket);
  return { status: 101, socket: answer.socket };
}

describe('a crowd of WebSockets', () => {
  it('caps the sockets of one client; the others and /health are still served', async () => {
    const harness = await capped();
    used = harness;
    const target = (await listeners.listen(harness)).origin;
    const crowd = await Promise.all(
      Array.from({ length: 200 }, () => connect(target, '203.0.113.7')),
    );
    expect(crowd.filter((answer) => answer.status === 101)).toHaveLength(10);
    const refused = crowd.filter((answer) => answer.status !== 101);
    expect(refused).toHaveLength(190);
    for (const answer of refused) {
      expect(answer).toMatchObject({
        status: 429,
        body: {
          errors: [
            { extensions: { code: 'TOO_MANY_WEBSOCKETS', limit: 'MAX_WEBSOCKETS_PER_CLIENT' } },
          ],
        },
      });
    }
    expect((await fetch(`${target}/health`)).status).toBe(200);
    expect((await connect(target, '198.51.100.1')).status).toBe(101);
    // A slot comes back when its socket closes.
    crowd.find((answer) => answer.socket)?.socket?.close();
    await eventually(async () => (await connect(target, '203.0.113.7')).status === 101);
  });

  it('keeps WebSockets below HTTP_MAX_CONNECTIONS, so HTTP answers whatever their number', async () => {
    const harness = await capped();
    used = harness;
    const target = harness.origin;
    // MAX_WEBSOCKETS is unset: three quarters of HTTP_MAX_CONNECTIONS, 30.
    const crowd = await Promise.all(
      Array.from({ length: 36 }, (_, i) => connect(target, `203.0.113.${i}`)),
    );
    expect(crowd.filter((answer) => answer.status === 101)).toHaveLength(30);
    for (const answer of crowd.filter((answer) => answer.status !== 101)) {
      expect(answer).toMatchObject({
        status: 503,
        body: {
          errors: [{ extensions: { code: 'TOO_MANY_WEBSOCKETS', limit: 'MAX_WEBSOCKETS' } }],
        },
      });
    }
    const checks = await Promise.all(
      Array.from({ length: 5 }, () => harness.fetch('/health').then((r) => r.status)),
    );
    expect(checks).toEqual([200, 200, 200, 200, 200]);
    expect((await harness.execute('{ statusPage { name } }')).status).toBe(200);
  });

  it('closes a socket that runs no operation for WEBSOCKET_IDLE_TIMEOUT_MS, not one that does', async () => {
    const harness = await capped();
    used = harness;
    const idle = await connect(harness.origin, '127.0.0.1');
    const busy = await connect(harness.origin, '127.0.0.1');
    if (!idle.socket || !busy.socket) throw new Error('not opened');
    busy.socket.send(
      JSON.stringify({
        type: 'subscribe',
        id: '1',
        payload: { query: 'subscription { statusPageChanged { name } }' },
      }),
    );
    // Pings from the client keep a socket alive, not busy.
    const pinging = setInterval(() => idle.socket.send(JSON.stringify({ type: 'ping' })), 50);
    const idleClosed = await closeOf(idle.socket);
    clearInterval(pinging);
    expect(idleClosed).toEqual({
      code: 1000,
      reason: `Idle: no operation for ${IDLE_TIMEOUT_MS} ms`,
    });
    expect(busy.socket.readyState).toBe(WebSocket.OPEN);
  });

  it('closes a socket that sends no connection_init with 4408', async () => {
    const harness = await capped();
    used = harness;
    const silent = await connect((await listeners.listen(harness)).origin, '127.0.0.1', false);
    if (!silent.socket) throw new Error('not opened');
    expect(await closeOf(silent.socket)).toEqual({
      code: 4408,
      reason: 'Connection initialisation timeout',
    });
  });
});
