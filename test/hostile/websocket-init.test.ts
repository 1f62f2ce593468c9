import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type InProcessGateway, startInProcess } from '../helpers/in-process.js';
import { closeOf, initialise } from '../helpers/subscriptions.js';

/*
 * Finding: 1,000 WebSockets each sending a 250 KB `connection_init` payload, kept for the socket's
 * life, took the production process from 161 to 361 MiB and out of heap. Now a `connection_init`
 * over 4 KiB closes its socket with 4400, and no payload is kept (the gateway reads none).
 */

/** Sockets sending a large `connection_init` at once. */
const SOCKETS = 50;

/** The listener alone (what it answers a socket's first message): in process. */
let gateway: InProcessGateway;
beforeAll(() => {
  // Every socket comes from one client, all open at once: none is refused at the handshake.
  gateway = startInProcess({ env: { MAX_WEBSOCKETS_PER_CLIENT: SOCKETS }, logLevel: 'silent' });
});
afterAll(async () => {
  await gateway?.close();
});

/** Opens a graphql-ws socket, sends `init`, and resolves with the ack or the close. */
async function initialiseWith(init: string) {
  const socket = await gateway.openedWebSocket();
  return { ...(await initialise(socket, init)), socket };
}

const initWith = (payload: unknown) => JSON.stringify({ type: 'connection_init', payload });

describe('connection_init payloads', () => {
  it('closes every socket whose connection_init is over 4 KiB with 4400, and keeps none open', async () => {
    const big = initWith({ token: 'x'.repeat(250_000) });
    const answers = await Promise.all(Array.from({ length: SOCKETS }, () => initialiseWith(big)));
    for (const answer of answers) {
      expect(answer).toMatchObject({
        acked: false,
        code: 4400,
        reason: 'connection_init larger than 4096 bytes: the gateway reads no payload',
      });
    }
    // The server holds none of them any more.
    await eventually(() => gateway.openConnections() === 0);
    expect((await gateway.request('/health')).status).toBe(200);
  });

  it('acknowledges a connection_init with a small payload, as clients send them', async () => {
    const small = await initialiseWith(initWith({ authorization: 'Bearer abc', locale: 'en' }));
    expect(small.acked).toBe(true);
    const bare = await initialiseWith(JSON.stringify({ type: 'connection_init' }));
    expect(bare.acked).toBe(true);
    // Closed before the next test, which opens as many sockets as one client may hold.
    await Promise.all(
      [small, bare].map(({ socket }) => {
        const closed = closeOf(socket);
        socket.close();
        return closed;
      }),
    );
  });
});
