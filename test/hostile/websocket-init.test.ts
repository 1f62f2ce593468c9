import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { initialise, openedSocket } from '../helpers/subscriptions.js';

/*
 * Finding: 1,000 WebSockets each sending a 250 KB `connection_init` payload, kept for the socket's
 * life, took the production process from 161 to 361 MiB and out of heap. Now a `connection_init`
 * over 4 KiB closes its socket with 4400, and no payload is kept (the gateway reads none).
 */

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({ logLevel: 'silent' });
});
afterAll(async () => {
  await harness?.close();
});

/** Opens a graphql-ws socket, sends `init`, and resolves with the ack or the close. */
async function initialiseWith(init: string) {
  const socket = await openedSocket(harness.origin);
  return { ...(await initialise(socket, init)), socket };
}

const openConnections = () =>
  new Promise<number>((resolve) => harness.server.getConnections((_, count) => resolve(count)));

const initWith = (payload: unknown) => JSON.stringify({ type: 'connection_init', payload });

describe('connection_init payloads', () => {
  it('closes every socket whose connection_init is over 4 KiB with 4400, and keeps none open', async () => {
    const big = initWith({ token: 'x'.repeat(250_000) });
    const answers = await Promise.all(Array.from({ length: 50 }, () => initialiseWith(big)));
    for (const answer of answers) {
      expect(answer).toMatchObject({
        acked: false,
        code: 4400,
        reason: 'connection_init larger than 4096 bytes: the gateway reads no payload',
      });
    }
    // The server holds none of them any more.
    await eventually(async () => (await openConnections()) === 0);
    expect((await harness.fetch('/health')).status).toBe(200);
  });

  it('acknowledges a connection_init with a small payload, as clients send them', async () => {
    const small = await initialiseWith(initWith({ authorization: 'Bearer abc', locale: 'en' }));
    expect(small.acked).toBe(true);
    const bare = await initialiseWith(JSON.stringify({ type: 'connection_init' }));
    expect(bare.acked).toBe(true);
    for (const { socket } of [small, bare]) socket.close();
  });
});
