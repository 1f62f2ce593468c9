import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { closeOf, openedSocket } from '../helpers/subscriptions.js';

/*
 * The graphql-transport-ws protocol as graphql-ws's PROTOCOL.md names it, message by message and
 * close code by close code, over raw sockets: what the gateway's own server answers a client that
 * follows it, and one that does not. (4408, no `connection_init` in time, is in
 * test/hostile/websocket-crowd.test.ts; 4403 is never sent: every `connection_init` is
 * acknowledged, a socket from a page of another origin is refused at the handshake with 403.)
 */

let harness: Harness;
const sockets: WebSocket[] = [];
beforeAll(async () => {
  harness = await startHarness({
    env: { MAX_SUBSCRIPTIONS_PER_CONNECTION: 3 },
    logLevel: 'info',
  });
});
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.terminate();
});
afterAll(async () => {
  await harness?.close();
});

interface Raw {
  readonly socket: WebSocket;
  /** Every message the server sent, parsed. */
  readonly messages: { type: string; id?: string; payload?: unknown }[];
  send(message: unknown): void;
  /** The close code and reason, once the server closes. */
  readonly closed: Promise<{ code: number; reason: string }>;
  /** The next message the server sends of `type`. */
  next(type: string, id?: string): Promise<{ type: string; id?: string; payload?: unknown }>;
}

async function connect(protocol: string | null = 'graphql-transport-ws', init = true) {
  const socket = await openedSocket(harness.origin, { protocol });
  sockets.push(socket);
  const messages: Raw['messages'] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data))));
  const closed = closeOf(socket);
  let seen = 0;
  const raw: Raw = {
    socket,
    messages,
    closed,
    send: (message) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    next: async (type, id) => {
      const found = await eventually(() => {
        const index = messages.findIndex(
          (message, i) =>
            i >= seen && message.type === type && (id === undefined || message.id === id),
        );
        return index >= 0 ? index : undefined;
      });
      seen = found + 1;
      return messages[found] as Raw['messages'][number];
    },
  };
  if (init) {
    raw.send({ type: 'connection_init' });
    await raw.next('connection_ack');
  }
  return raw;
}

const QUERY = '{ statusPage { name } }';
const SUBSCRIPTION = 'subscription { statusPageChanged { name } }';
const errorLines = () => harness.logs.filter((line) => (line.level as number) >= 50);

describe('graphql-transport-ws, as the gateway serves it', () => {
  it('acknowledges connection_init, answers ping with pong (and its payload), and takes a pong', async () => {
    const raw = await connect();
    raw.send({ type: 'ping', payload: { at: 1 } });
    expect(await raw.next('pong')).toEqual({ type: 'pong', payload: { at: 1 } });
    raw.send({ type: 'ping' });
    expect(await raw.next('pong')).toEqual({ type: 'pong' });
    raw.send({ type: 'pong', payload: { unsolicited: true } });
    raw.send({ type: 'connection_init', payload: null });
    // The second init is refused (4429): the pong before it closed nothing.
    expect(await raw.closed).toEqual({ code: 4429, reason: 'Too many initialisation requests' });
  });

  it('answers a query with next then complete, a subscription with next until the client completes it, and a refused operation with error', async () => {
    const raw = await connect();
    const name = harness.simulator.statusFeed.summary.page.name;
    raw.send({ id: 'q', type: 'subscribe', payload: { query: QUERY } });
    expect(await raw.next('next', 'q')).toEqual({
      id: 'q',
      type: 'next',
      payload: { data: { statusPage: { name } } },
    });
    expect(await raw.next('complete', 'q')).toEqual({ id: 'q', type: 'complete' });

    raw.send({ id: 's', type: 'subscribe', payload: { query: SUBSCRIPTION } });
    expect((await raw.next('next', 's')).payload).toEqual({
      data: { statusPageChanged: { name } },
    });
    await eventually(
      async () =>
        (await harness.metric(
          'graphql_subscriptions_open{field="statusPageChanged",transport="websocket"}',
        )) === 1,
    );
    raw.send({ id: 's', type: 'complete' });
    await eventually(
      async () =>
        (await harness.metric(
          'graphql_subscriptions_open{field="statusPageChanged",transport="websocket"}',
        )) === 0,
    );
    // An id the server no longer knows is no error.
    raw.send({ id: 's', type: 'complete' });

    raw.send({ id: 'bad', type: 'subscribe', payload: { query: 'subscription { nope }' } });
    const refused = await raw.next('error', 'bad');
    expect(refused.payload).toMatchObject([{ message: expect.stringMatching(/nope/) }]);
    // A mutation is told where it goes, and nothing is sent to the verification service.
    const verifications = harness.simulator.requestCount();
    raw.send({
      id: 'm',
      type: 'subscribe',
      payload: {
        query:
          'mutation { verifyContract(input: { chainId: "295", address: "0x1" }) { __typename } }',
      },
    });
    expect((await raw.next('error', 'm')).payload).toEqual([
      {
        message:
          'Mutations are not run over the WebSocket: send this one as an HTTP POST to /graphql (queries and subscriptions may use either).',
        extensions: { code: 'BAD_REQUEST' },
      },
    ]);
    expect(harness.simulator.requestCount()).toBe(verifications);
    // The id is free again once its operation is over.
    raw.send({ id: 'q', type: 'subscribe', payload: { query: QUERY } });
    await raw.next('complete', 'q');
    expect(raw.socket.readyState).toBe(WebSocket.OPEN);
  });

  it.each([
    ['a message that is not JSON', '{"type":', 'Invalid message received'],
    ['a message that is not an object', '[1,2]', 'Invalid message received'],
    ['a message without a type', { id: '1' }, 'Invalid message received'],
    [
      'a type the protocol does not name',
      { type: 'start' },
      'Unexpected message of type start received',
    ],
    [
      'a next message from the client',
      { id: '1', type: 'next', payload: {} },
      'Unexpected message of type next received',
    ],
    [
      'an error message from the client',
      { id: '1', type: 'error', payload: [] },
      'Unexpected message of type error received',
    ],
    [
      'a subscribe whose query is a number',
      { id: '1', type: 'subscribe', payload: { query: 1 } },
      'Invalid subscribe message received',
    ],
    [
      'a subscribe without an id',
      { type: 'subscribe', payload: { query: QUERY } },
      'Invalid subscribe message received',
    ],
    [
      'a subscribe whose id is over 256 characters',
      { id: 'x'.repeat(257), type: 'subscribe', payload: { query: QUERY } },
      'Invalid subscribe message received',
    ],
    [
      'a complete whose id is over 256 characters',
      { id: 'x'.repeat(257), type: 'complete' },
      'Invalid complete message received',
    ],
    [
      'a subscribe whose variables are a list',
      { id: '1', type: 'subscribe', payload: { query: QUERY, variables: [] } },
      'Invalid subscribe message received',
    ],
    ['a complete without an id', { type: 'complete' }, 'Invalid complete message received'],
    [
      'a ping whose payload is a string',
      { type: 'ping', payload: 'x' },
      'Invalid ping message received',
    ],
  ])(
    'closes the socket with 4400 on %s, with no error-level log line',
    async (_name, message, reason) => {
      const raw = await connect();
      const errors = errorLines().length;
      raw.send(message);
      expect(await raw.closed).toEqual({ code: 4400, reason });
      expect(errorLines()).toHaveLength(errors);
    },
  );

  it.each([
    ['a string', 'token'],
    ['a number', 42],
    ['a list', [1]],
  ])('closes a connection_init whose payload is %s with 4400', async (_name, payload) => {
    const raw = await connect('graphql-transport-ws', false);
    raw.send({ type: 'connection_init', payload });
    expect(await raw.closed).toEqual({
      code: 4400,
      reason: 'Invalid connection_init message received',
    });
    expect(raw.messages).toEqual([]);
  });

  it('closes a subscribe sent before connection_init with 4401', async () => {
    const raw = await connect('graphql-transport-ws', false);
    raw.send({ id: '1', type: 'subscribe', payload: { query: QUERY } });
    expect(await raw.closed).toEqual({ code: 4401, reason: 'Unauthorized' });
  });

  it('closes a socket that names no subprotocol with 4406', async () => {
    // One that offers only another (the legacy `graphql-ws`) is answered with none: its client
    // gives up at the handshake.
    const raw = await connect(null, false);
    expect(await raw.closed).toEqual({ code: 4406, reason: 'Subprotocol not acceptable' });
  });

  it('closes a subscribe whose id is running already with 4409', async () => {
    const raw = await connect();
    raw.send({ id: 'same', type: 'subscribe', payload: { query: SUBSCRIPTION } });
    await raw.next('next', 'same');
    raw.send({ id: 'same', type: 'subscribe', payload: { query: SUBSCRIPTION } });
    expect(await raw.closed).toEqual({ code: 4409, reason: 'Subscriber for same already exists' });
    await eventually(
      async () =>
        (await harness.metric(
          'graphql_subscriptions_open{field="statusPageChanged",transport="websocket"}',
        )) === 0,
    );
  });

  it('refuses an operation past MAX_SUBSCRIPTIONS_PER_CONNECTION with an error message, and keeps the socket', async () => {
    const raw = await connect();
    for (const id of ['1', '2', '3']) {
      raw.send({ id, type: 'subscribe', payload: { query: SUBSCRIPTION } });
      await raw.next('next', id);
    }
    raw.send({ id: '4', type: 'subscribe', payload: { query: QUERY } });
    expect((await raw.next('error', '4')).payload).toMatchObject([
      { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', limit: 'MAX_SUBSCRIPTIONS_PER_CONNECTION' } },
    ]);
    expect(raw.socket.readyState).toBe(WebSocket.OPEN);
  });
});
