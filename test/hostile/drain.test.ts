import { Agent, request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { extraListeners } from '../helpers/extra-listeners.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { type InProcessGateway, startInProcess } from '../helpers/in-process.js';
import { openRawSocket } from '../helpers/raw-socket.js';

const BODY = JSON.stringify({ query: '{ statusPage { name } }' });

type Outcome =
  | { kind: 'answered'; status: number; connection: string | undefined; complete: boolean }
  /** Failed before the request was handed to the kernel: the connection was refused or closed. */
  | { kind: 'refused'; code: string | undefined }
  /** Failed after the whole request was sent: what the drain must never do. */
  | { kind: 'failed after sending'; code: string | undefined; message: string };

/** One POST through a keep-alive agent, telling apart a request never sent from one sent and lost. */
function send(agent: Agent, port: number) {
  return new Promise<Outcome>((resolve) => {
    let sent = false;
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ kind: 'failed after sending', code: error.code, message: error.message }),
        );
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString();
          resolve({
            kind: 'answered',
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            complete: res.complete && body.includes('"statusPage"'),
          });
        });
      },
    );
    req.on('finish', () => {
      sent = true;
    });
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve(
        sent
          ? { kind: 'failed after sending', code: error.code, message: error.message }
          : { kind: 'refused', code: error.code },
      ),
    );
    req.end(BODY);
  });
}

const answers = (text: string) => text.match(/HTTP\/1\.1 \d+/g) ?? [];

/** A WebSocket handshake for graphql-ws, as a browser sends it. */
const UPGRADE =
  'GET /graphql HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
  'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
  'Sec-WebSocket-Protocol: graphql-transport-ws\r\nx-request-id: late-socket\r\n\r\n';

/** The last answer in `text` (a raw HTTP stream): its status, headers and JSON body. */
function lastAnswer(text: string) {
  const answer = text.slice(text.lastIndexOf('HTTP/1.1 '));
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) as unknown };
}

/** What a WebSocket handshake refused because the gateway is shutting down is answered. */
const SHUTTING_DOWN = {
  status: 503,
  headers: { 'retry-after': '1', connection: 'close' },
  body: { errors: [{ message: expect.any(String), extensions: { code: 'SHUTTING_DOWN' } }] },
};

const REQUEST = `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`;

/*
 * A drain ends its listener, not the gateway behind it: each test drains a production listener of
 * its own in front of the one gateway.
 */
describe('a drain under keep-alive load', () => {
  let harness: Harness;
  const listeners = extraListeners();
  beforeAll(async () => {
    harness = await startHarness({ logLevel: 'warn' });
  });
  afterEach(() => listeners.close());
  afterAll(() => harness.close());

  it('answers every request its clients fully sent; the others are refused before sending', async () => {
    const listener = await listeners.listen(harness);
    const port = listener.port;
    const agent = new Agent({ keepAlive: true, maxSockets: 10 });
    const outcomes: Outcome[] = [];
    let drainStarted = false;
    let answeredDuringDrain = 0;
    // Ten clients, each sending its next request as soon as its answer is in, until refused.
    const clients = Array.from({ length: 10 }, async () => {
      for (;;) {
        const outcome = await send(agent, port);
        outcomes.push(outcome);
        if (outcome.kind === 'answered' && drainStarted) answeredDuringDrain += 1;
        if (outcome.kind !== 'answered') return;
      }
    });
    await eventually(() => outcomes.length >= 500);
    drainStarted = true;
    await listener.drain(10_000);
    await Promise.all(clients);
    agent.destroy();

    const failed = outcomes.filter((outcome) => outcome.kind === 'failed after sending');
    expect(failed).toEqual([]);
    const answered = outcomes.filter((outcome) => outcome.kind === 'answered');
    expect(answered.every((outcome) => outcome.status === 200 && outcome.complete)).toBe(true);
    // Each client's last answer closed its connection; its next request found the door shut.
    expect(answeredDuringDrain).toBeGreaterThanOrEqual(10);
    expect(outcomes.filter((outcome) => outcome.kind === 'refused')).toEqual(
      Array.from({ length: 10 }, () => ({ kind: 'refused', code: 'ECONNREFUSED' })),
    );
  });

  it('answers, with Connection: close, a request sent on a connection idle when the drain began', async () => {
    const listener = await listeners.listen(harness);
    const client = await openRawSocket(listener.origin);
    client.socket.write(REQUEST);
    await eventually(() => client.received().includes('"statusPage"'));
    expect(client.received()).not.toMatch(/connection: close/i);

    const drained = listener.drain(10_000);
    client.socket.write(REQUEST);
    await client.ended;
    await drained;
    expect(client.error()).toBeUndefined();
    const [, second] = client.received().split(/(?=HTTP\/1\.1 )/);
    expect(answers(client.received())).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(second).toMatch(/^connection: close\r$/im);
    expect(second).toContain('"statusPage"');
  });

  it('closes a connection that stays idle with a FIN, not a reset, well before the grace ends', async () => {
    const listener = await listeners.listen(harness);
    const client = await openRawSocket(listener.origin);
    client.socket.write(REQUEST);
    await eventually(() => client.received().includes('"statusPage"'));

    const drained = listener.drain(60_000);
    // The server's FIN; the client answers with its own, as a client does between requests.
    await client.ended;
    client.socket.end();
    await client.closed;
    await drained;
    expect(client.error()).toBeUndefined();
    expect(answers(client.received())).toEqual(['HTTP/1.1 200']);
  });

  it('destroys at the grace deadline a connection whose client never closes its side', async () => {
    const listener = await listeners.listen(harness);
    const client = await openRawSocket(listener.origin);
    client.socket.write(REQUEST);
    await eventually(() => client.received().includes('"statusPage"'));
    // A half-open client: reads the server's FIN and never sends its own.
    client.socket.allowHalfOpen = true;
    await listener.drain(2_000);
    await client.ended;
    client.socket.destroy();
  });

  it('refuses a WebSocket handshake sent on a keep-alive connection while the server drains: 503 SHUTTING_DOWN, Retry-After', async () => {
    const listener = await listeners.listen(harness);
    const client = await openRawSocket(listener.origin);
    client.socket.write(REQUEST);
    await eventually(() => client.received().includes('"statusPage"'));

    const drained = listener.drain(10_000);
    client.socket.write(UPGRADE);
    await client.ended;
    await drained;
    expect(answers(client.received())).toEqual(['HTTP/1.1 200', 'HTTP/1.1 503']);
    expect(lastAnswer(client.received())).toMatchObject(SHUTTING_DOWN);
  });
});

/** The listener alone (an upgrade refused before any WebSocket exists): in process. */
describe('shutting down', () => {
  let gateway: InProcessGateway;
  afterEach(() => gateway.close());

  it('refuses a new WebSocket with 503 SHUTTING_DOWN and Retry-After, and still answers HTTP', async () => {
    gateway = startInProcess({ logLevel: 'info' });
    // As main.ts does on SIGTERM, before the server drains.
    gateway.gateway.quiesce();
    const received = await gateway.exchange(UPGRADE);
    expect(lastAnswer(received)).toMatchObject({
      ...SHUTTING_DOWN,
      headers: { ...SHUTTING_DOWN.headers, 'x-request-id': 'late-socket' },
    });
    expect(gateway.logs).toContainEqual(
      expect.objectContaining({
        msg: 'websocket refused',
        requestId: 'late-socket',
        status: 503,
        code: 'SHUTTING_DOWN',
      }),
    );
    // Not a refusal: an HTTP request is answered until the server has drained.
    const { status, body } = await gateway.execute('{ __typename }');
    expect(status).toBe(200);
    expect(body).toEqual({ data: { __typename: 'Query' } });
  });
});
