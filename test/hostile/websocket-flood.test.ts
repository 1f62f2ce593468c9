import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { sharedHarnesses } from '../helpers/shared-harness.js';
import { wsClient } from '../helpers/subscriptions.js';

/*
 * Finding: one socket sending `{"type":"ping"}` as fast as it could while never reading ran the
 * production process out of heap in 15 s (1.17 million pongs waiting). Now what a socket has not
 * read is bounded: past 64 KiB its reads pause (the flood stalls itself), past
 * WEBSOCKET_MAX_BUFFERED_BYTES it is closed with 1008, and a stalled socket answers no ping, so
 * the keep-alive ends it.
 */

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({
    env: { SUBSCRIPTION_KEEP_ALIVE_MS: 2_000, WEBSOCKET_MAX_BUFFERED_BYTES: 256 * 1024 },
  });
});
afterAll(async () => {
  await harness?.close();
  await harnesses.close();
});

/*
 * A gateway for a bound of its own: a socket may queue 16 KiB, more than a burst of first events
 * one turn queues for a client that reads is allowed past, less than a flood queues before its
 * reads pause (64 KiB). No keep-alive before the outbox fills: only the bound can close a socket.
 */
const harnesses = sharedHarnesses();
const bounded = () =>
  harnesses.use({
    env: {
      WEBSOCKET_MAX_BUFFERED_BYTES: 16 * 1024,
      SUBSCRIPTION_KEEP_ALIVE_MS: 60_000,
      HTTP_SOCKET_IDLE_TIMEOUT_MS: 120_000,
    },
  });

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * The gateway runs in this process: what it retains (garbage collected first), its heap and the
 * buffers outside it that queued writes hold.
 */
const memoryMiB = () => {
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return (heapUsed + external) / 2 ** 20;
};

/**
 * The red team's client, in a process of its own so that its buffers are not counted here: it
 * stops reading, then sends pings (each echoed with its 8 KB payload) as fast as its socket takes
 * them, `count` at most, and prints the close code it sees.
 */
const FLOODER = `
import WebSocket from 'ws';
const [url, count] = process.argv.slice(-2);
const socket = new WebSocket(url, 'graphql-transport-ws');
socket.on('error', () => {});
socket.on('close', (code) => { console.log(code); process.exit(0); });
// Cut while its reads are paused, ws never reads the end and emits no close: the socket is gone.
process.on('exit', () => { if (socket.readyState !== WebSocket.CLOSED) console.log(1006); });
socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init' })));
socket.once('message', async () => {
  socket._socket.pause();
  const ping = JSON.stringify({ type: 'ping', payload: { pad: 'x'.repeat(8000) } });
  for (let sent = 0; sent < Number(count); sent++) {
    while (socket.bufferedAmount > 2 ** 20) await new Promise((r) => setTimeout(r, 10));
    socket.send(ping);
    if (sent % 50 === 0) await new Promise((r) => setImmediate(r));
  }
});
`;

/** Starts the flooder against `target`: resolves with the close code it saw once it exits. */
function flood(target: Harness, count: number) {
  const flooder = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      FLOODER,
      `${target.origin.replace('http', 'ws')}/graphql`,
      `${count}`,
    ],
    { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  flooder.stdout.on('data', (chunk) => {
    output += String(chunk);
  });
  return once(flooder, 'close').then(() => Number(output.trim()));
}

describe('a client that floods a socket and never reads', () => {
  it('is stalled and closed, while the memory it costs stays bounded and /health answers', async () => {
    const exited = flood(harness, 5_000);
    let exitedYet = false;
    void exited.then(() => {
      exitedYet = true;
    });

    const before = memoryMiB();
    let peakGrowth = 0;
    let healthChecks = 0;
    // 40 MB of pongs, were they all queued: sampled while the flood runs.
    const sample = setInterval(() => {
      peakGrowth = Math.max(peakGrowth, memoryMiB() - before);
    }, 200);
    // A probe's pace, not a load: this process is the gateway, and the flood is what it serves.
    while (!exitedYet) {
      expect((await harness.fetch('/health')).status).toBe(200);
      healthChecks += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    clearInterval(sample);
    const seen = await exited;

    const log = await eventually(() =>
      harness.logs.find(
        (line) => line.msg === 'websocket closed' && line.transport === 'websocket',
      ),
    );
    // Closed for not reading (1008), or by the keep-alive (1006) once its reads were paused.
    expect([1006, 1008]).toContain(log.code);
    expect(seen).toBe(1006);
    expect(healthChecks).toBeGreaterThan(0);
    expect(peakGrowth).toBeLessThan(16);
  });

  it('is closed with 1008 once more than WEBSOCKET_MAX_BUFFERED_BYTES waits for it', async () => {
    const strict = await bounded();
    const from = strict.logs.length;
    const since = () => strict.logs.slice(from);
    // The client sees the close frame if it was read along with the rest, or only the cut.
    expect([1006, 1008]).toContain(await flood(strict, 5_000));
    const log = await eventually(() =>
      since().find((line) => line.msg === 'websocket closed' && line.transport === 'websocket'),
    );
    // Its close frame sent, it is cut (the client reads no close frame to answer): 1006 here.
    expect([1006, 1008]).toContain(log.code);
    expect(
      since().some(
        (line) => line.msg === 'websocket closed: the client does not read what it is sent',
      ),
    ).toBe(true);
  });

  it('closes slow readers once all sockets together hold WEBSOCKET_MAX_TOTAL_BUFFERED_BYTES', async () => {
    const crowd = await startHarness({
      env: {
        // Each socket alone may queue 1 MiB; together they may queue 48 KiB.
        WEBSOCKET_MAX_BUFFERED_BYTES: 1_048_576,
        WEBSOCKET_MAX_TOTAL_BUFFERED_BYTES: 48 * 1024,
        SUBSCRIPTION_KEEP_ALIVE_MS: 60_000,
        HTTP_SOCKET_IDLE_TIMEOUT_MS: 120_000,
      },
    });
    try {
      const codes = await Promise.all([
        flood(crowd, 5_000),
        flood(crowd, 5_000),
        flood(crowd, 5_000),
      ]);
      for (const code of codes) expect([1006, 1008]).toContain(code);
      await eventually(() =>
        expect(
          crowd.logs.filter(
            (line) => line.msg === 'websocket closed: the client does not read what it is sent',
          ).length,
        ).toBe(3),
      );
      expect((await crowd.fetch('/health')).status).toBe(200);
      // What the closed sockets held is given back: a client that reads is served.
      const client = wsClient(crowd.origin);
      try {
        const answer = await new Promise((resolve, reject) =>
          client.subscribe(
            { query: '{ statusPage { name } }' },
            { next: resolve, error: reject, complete: () => {} },
          ),
        );
        expect(answer).toMatchObject({ data: { statusPage: { name: expect.any(String) } } });
      } finally {
        await client.dispose();
      }
    } finally {
      await crowd.close();
    }
  });

  it('serves a client that reads a burst larger than WEBSOCKET_MAX_BUFFERED_BYTES, queued at once', async () => {
    const burst = await bounded();
    const from = burst.logs.length;
    const client = wsClient(burst.origin);
    try {
      // Twenty subscriptions' first events, the whole page each, queued in the same turn.
      const firsts = Array.from(
        { length: 20 },
        () =>
          new Promise((resolve, reject) => {
            const dispose = client.subscribe(
              { query: `subscription { statusPageChanged { ${PAGE_SELECTION} } }` },
              {
                next: (result) => {
                  resolve(result);
                  dispose();
                },
                error: reject,
                complete: () => {},
              },
            );
          }),
      );
      for (const first of await Promise.all(firsts)) {
        expect(first).toMatchObject({ data: { statusPageChanged: { name: expect.any(String) } } });
      }
      expect(
        burst.logs
          .slice(from)
          .some(
            (line) => line.msg === 'websocket closed: the client does not read what it is sent',
          ),
      ).toBe(false);
    } finally {
      await client.dispose();
    }
  });
});

/** A large part of the page: each first event is several KB. */
const PAGE_SELECTION =
  'name components { id name status description group { id name } } incidents { id name status updates { body status } }';
