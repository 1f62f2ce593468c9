import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import {
  closeOf,
  openedSocket,
  openSocket,
  polledOnce,
  subscribeWs,
  wsClient,
} from '../helpers/subscriptions.js';

const TTL_MS = 150;
const ALLOWED = 'https://board.example-ledger.com';

const COMPONENT_CHANGES = /* GraphQL */ `
  subscription { componentStatusChanged { component { id status } previousStatus status } }
`;

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({
    env: {
      STATUS_CACHE_TTL_MS: TTL_MS,
      MAX_SUBSCRIPTIONS_PER_CONNECTION: 2,
      MAX_DEPTH: 6,
      CORS_ORIGINS: ALLOWED,
      SUBSCRIPTION_KEEP_ALIVE_MS: 200,
      MAX_BODY_BYTES: 4096,
    },
    logLevel: 'silent',
  });
});
afterAll(async () => {
  await harness?.close();
});

/** Resolves once the gateway counts `count` graphql-ws subscriptions of component changes open. */
const openOverWs = (count: number) =>
  eventually(
    async () =>
      (await harness.metric(
        'graphql_subscriptions_open{field="componentStatusChanged",transport="websocket"}',
      )) === count,
  );
const leafId = () => {
  const leaf = harness.simulator.statusFeed.summary.components.find((c) => c.name === 'Status API');
  if (!leaf) throw new Error('no Status API');
  return leaf.id;
};

/** Opens a socket and resolves with the handshake's answer: its status, or 101. */
async function handshake(headers: Record<string, string>, path = '/graphql') {
  const answer = await openSocket(harness.origin, { headers, path });
  answer.socket?.close();
  return { status: answer.status, body: answer.socket ? '' : answer.body };
}

describe('graphql-ws on /graphql', () => {
  it('delivers a component change made in the simulator', async () => {
    const client = wsClient(harness.origin);
    const changes = subscribeWs<{
      componentStatusChanged: { component: { id: string }; status: string };
    }>(client, COMPONENT_CHANGES);
    await polledOnce(harness.simulator);
    const id = leafId();
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [id]: 'partial_outage' }),
    );
    const event = await changes.next();
    expect(event.data?.componentStatusChanged).toEqual({
      component: { id, status: 'PARTIAL_OUTAGE' },
      previousStatus: 'OPERATIONAL',
      status: 'PARTIAL_OUTAGE',
    });
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [id]: 'operational' }),
    );
    await changes.next();
    await changes.close();
    await client.dispose();
  });

  it('answers queries with the same limits and masking as HTTP, and refuses mutations', async () => {
    const client = wsClient(harness.origin);
    const query = async (document: string) => {
      const result = subscribeWs(client, document);
      const answer = await Promise.race([result.next(), result.error.then((error) => ({ error }))]);
      return answer as { data?: unknown; errors?: unknown; error?: unknown };
    };
    expect(await query('{ statusPage { name } }')).toMatchObject({
      data: { statusPage: { name: 'Ledger Network Status' } },
    });
    const deep = await query(
      '{ statusPage { components { group { children { group { children { group { name } } } } } } } }',
    );
    expect(deep.error).toMatchObject([
      { extensions: { code: 'BAD_USER_INPUT', limit: 'MAX_DEPTH' } },
    ]);
    const mutation = await query(
      'mutation { verifyContract(input: { chainId: "1", address: "0x0" }) { __typename } }',
    );
    expect(mutation.error).toMatchObject([{ extensions: { code: 'BAD_REQUEST' } }]);
    const invalid = await query('subscription { nope }');
    expect(invalid.error).toMatchObject([{ message: expect.stringMatching(/nope/) }]);
    await client.dispose();
  });

  it('refuses an operation past MAX_SUBSCRIPTIONS_PER_CONNECTION with TOO_MANY_SUBSCRIPTIONS', async () => {
    const client = wsClient(harness.origin);
    const held = [subscribeWs(client, COMPONENT_CHANGES), subscribeWs(client, COMPONENT_CHANGES)];
    await openOverWs(2);
    const refused = subscribeWs(client, COMPONENT_CHANGES);
    expect(await refused.error).toMatchObject([
      { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', limit: 'MAX_SUBSCRIPTIONS_PER_CONNECTION' } },
    ]);
    // Queries count too: a socket runs no more operations at once than a limit allows.
    const query = subscribeWs(client, '{ statusPage { name } }');
    expect(await query.error).toMatchObject([{ extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } }]);
    await refused.completed;
    await held[0]?.close();
    await openOverWs(1);
    const again = subscribeWs(client, COMPONENT_CHANGES);
    await openOverWs(2);
    expect(again.events).toEqual([]);
    await Promise.all([again.close(), held[1]?.close()]);
    await client.dispose();
  });

  it('checks the Origin of a browser: its own and CORS_ORIGINS pass, any other site is refused', async () => {
    const host = new URL(harness.origin).host;
    expect((await handshake({ origin: harness.origin })).status).toBe(101);
    expect((await handshake({ origin: ALLOWED })).status).toBe(101);
    expect((await handshake({})).status).toBe(101);
    const foreign = await handshake({ origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body)).toMatchObject({
      errors: [{ extensions: { code: 'CSRF_BLOCKED' } }],
    });
    expect((await handshake({ origin: `http://${host}.evil.example` })).status).toBe(403);
    expect((await handshake({}, '/other')).status).toBe(404);
  });

  it('pings every SUBSCRIPTION_KEEP_ALIVE_MS, and closes a message larger than MAX_BODY_BYTES with 1009', async () => {
    const socket = await openedSocket(harness.origin);
    let pings = 0;
    socket.on('ping', () => {
      pings += 1;
    });
    socket.send(JSON.stringify({ type: 'connection_init' }));
    // Pinged every SUBSCRIPTION_KEEP_ALIVE_MS: twice, however long a busy machine takes.
    await eventually(() => pings >= 2);
    const closed = closeOf(socket);
    socket.send(
      JSON.stringify({ type: 'subscribe', id: '1', payload: { query: 'x'.repeat(5000) } }),
    );
    expect((await closed).code).toBe(1009);
  });

  it('terminates a socket that stops answering pings', async () => {
    const socket = await openedSocket(harness.origin, { autoPong: false });
    expect((await closeOf(socket)).code).toBe(1006);
  });
});
