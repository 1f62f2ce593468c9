import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { allEnded, openSubscriptions } from '../helpers/live-subscriptions.js';
import { initialise, openedSocket, polledOnce, subscribeSse } from '../helpers/subscriptions.js';

/*
 * Subscribers of the same operation share one execution of each event, and are sent the same
 * bytes. Every subscriber here keeps the text of each payload as it came off the wire.
 */

const COMPONENT = /* GraphQL */ `
  subscription Component($ids: [ID!]) {
    componentStatusChanged(ids: $ids) { component { id name status } previousStatus status }
  }
`;
const PAGE = 'subscription { statusPageChanged { status { indicator } components { id status } } }';
/** PAGE with each component's name too: 64 fields of the simulator's page (20 components), PAGE 44. */
const PAGE_WITH_NAMES =
  'subscription { statusPageChanged { status { indicator } components { id name status } } }';
/** Between what PAGE and PAGE_WITH_NAMES read of a page. */
const MAX_RESOLVED_FIELDS = 50;

/** A subscriber's payloads as sent: the text of each `next`. */
interface Raw {
  readonly payloads: string[];
  close(): void;
}

/** Subscribes over SSE, keeping each event's `data` as sent. */
async function sse(
  harness: Harness,
  query: string,
  variables?: Record<string, unknown>,
): Promise<Raw> {
  const subscription = await subscribeSse(harness.origin, query, variables);
  return { payloads: subscription.payloads, close: () => void subscription.close() };
}

/** A graphql-ws socket whose operations keep each `next` payload's text as sent. */
async function socket(harness: Harness) {
  const ws = await openedSocket(harness.origin);
  const byId = new Map<string, string[]>();
  ws.on('message', (data) => {
    const text = String(data);
    const { id, type } = JSON.parse(text) as { id?: string; type: string };
    if (type !== 'next' || id === undefined) return;
    // The payload is the message's last property.
    byId.get(id)?.push(text.slice(text.indexOf('"payload":') + '"payload":'.length, -1));
  });
  if (!(await initialise(ws)).acked) throw new Error('no connection_ack');
  let next = 0;
  return {
    subscribe(query: string, variables?: Record<string, unknown>): Raw {
      const id = String(++next);
      const payloads: string[] = [];
      byId.set(id, payloads);
      ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables } }));
      return { payloads, close: () => ws.send(JSON.stringify({ id, type: 'complete' })) };
    },
    close: () => ws.close(),
  };
}

const executions = (harness: Harness, field: string) =>
  harness.metric(`graphql_subscription_executions_total{field="${field}"}`);

/** Components in a group that are operational now. */
const leaves = (harness: Harness) =>
  harness.simulator.statusFeed.summary.components.filter(
    (c) => !c.group && c.group_id && c.status === 'operational',
  );

/*
 * One gateway for every test: each ends its subscriptions and sockets (`allEnded`), and changes
 * components that are operational when it starts.
 */
let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({
    env: {
      STATUS_CACHE_TTL_MS: 150,
      MAX_SUBSCRIPTIONS_PER_CLIENT: 1_000,
      MAX_SUBSCRIPTIONS_PER_CONNECTION: 100,
      MAX_RESOLVED_FIELDS,
    },
    logLevel: 'info',
  });
});
afterAll(async () => {
  await harness?.close();
});

describe('subscribers of the same operation', () => {
  it('share one execution per change and get the same bytes, over SSE and graphql-ws; other variables get their own', async () => {
    const [a, b] = leaves(harness);
    if (!a || !b) throw new Error('the feed has no two grouped components');
    const ws = await socket(harness);
    const sameA: Raw[] = [];
    const sameB: Raw[] = [];
    for (let i = 0; i < 25; i += 1) {
      sameA.push(await sse(harness, COMPONENT, { ids: [a.id] }));
      sameA.push(ws.subscribe(COMPONENT, { ids: [a.id] }));
    }
    for (let i = 0; i < 5; i += 1) {
      sameB.push(await sse(harness, COMPONENT, { ids: [b.id] }));
      sameB.push(ws.subscribe(COMPONENT, { ids: [b.id] }));
    }
    await eventually(async () => (await openSubscriptions(harness)) === 60);
    await polledOnce(harness.simulator);
    const before = await executions(harness, 'componentStatusChanged');

    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [a.id]: 'major_outage', [b.id]: 'partial_outage' }),
    );
    await eventually(() => [...sameA, ...sameB].every(({ payloads }) => payloads.length === 1));
    // Each one's first event says where it starts (`extensions.since`): the data is the same.
    const dataOf = (payload: string | undefined) => JSON.parse(payload ?? '').data;
    const [sentA] = (sameA[0]?.payloads ?? []).map(dataOf);
    const [sentB] = (sameB[0]?.payloads ?? []).map(dataOf);
    expect({ data: sentA }).toEqual({
      data: {
        componentStatusChanged: {
          component: { id: a.id, name: a.name, status: 'MAJOR_OUTAGE' },
          previousStatus: 'OPERATIONAL',
          status: 'MAJOR_OUTAGE',
        },
      },
    });
    expect({ data: sentB }).toMatchObject({
      data: { componentStatusChanged: { component: { id: b.id }, status: 'PARTIAL_OUTAGE' } },
    });
    for (const { payloads } of sameA) expect(payloads.map(dataOf)).toEqual([sentA]);
    for (const { payloads } of sameB) expect(payloads.map(dataOf)).toEqual([sentB]);
    // One execution for each operation, not one per subscriber.
    expect((await executions(harness, 'componentStatusChanged')) - before).toBe(2);

    // Those that leave (the first, which executed the last change, among them) end no other.
    for (const subscriber of sameA.slice(0, 10)) subscriber.close();
    await eventually(async () => (await openSubscriptions(harness)) === 50);
    await polledOnce(harness.simulator);
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [a.id]: 'operational' }),
    );
    const staying = sameA.slice(10);
    await eventually(() => staying.every(({ payloads }) => payloads.length === 2));
    const recovered = staying[0]?.payloads[1];
    expect(JSON.parse(recovered ?? '')).toMatchObject({
      data: { componentStatusChanged: { status: 'OPERATIONAL', previousStatus: 'MAJOR_OUTAGE' } },
    });
    for (const { payloads } of staying) expect(payloads[1]).toBe(recovered);
    for (const { payloads } of sameA.slice(0, 10)) expect(payloads).toHaveLength(1);
    expect((await executions(harness, 'componentStatusChanged')) - before).toBe(3);

    for (const subscriber of [...sameA, ...sameB]) subscriber.close();
    ws.close();
    await allEnded(harness);
  });

  it('start with the page as it stands when they join, then share each change', async () => {
    const ws = await socket(harness);
    const pages: Raw[] = [];
    const initial = await executions(harness, 'statusPageChanged');
    for (let i = 0; i < 3; i += 1) {
      pages.push(await sse(harness, PAGE));
      pages.push(ws.subscribe(PAGE));
      // Joining while others are open: the page they were last sent, with no execution.
      await eventually(() => pages.every(({ payloads }) => payloads.length === 1));
    }
    // One shared subscription, whatever the transport.
    expect((await executions(harness, 'statusPageChanged')) - initial).toBe(1);
    const [first] = pages[0]?.payloads ?? [];
    for (const { payloads } of pages) expect(payloads).toEqual([first]);

    await polledOnce(harness.simulator);
    const before = await executions(harness, 'statusPageChanged');
    const pageEvents = await harness.metric('status_changes_total{type="page"}');
    const [leaf] = leaves(harness);
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [leaf?.id ?? '']: 'degraded_performance' }),
    );
    await eventually(() => pages.every(({ payloads }) => payloads.length >= 2));
    const changed = pages[0]?.payloads[1];
    expect(changed).toContain('DEGRADED_PERFORMANCE');
    for (const { payloads } of pages) expect(payloads[1]).toBe(changed);
    const events = (await harness.metric('status_changes_total{type="page"}')) - pageEvents;
    expect(events).toBeGreaterThanOrEqual(1);
    expect((await executions(harness, 'statusPageChanged')) - before).toBe(events);

    // Joining now: the page as it changed, not the one the first subscribers started with.
    const late = [await sse(harness, PAGE), ws.subscribe(PAGE)];
    await eventually(() => late.every(({ payloads }) => payloads.length === 1));
    for (const { payloads } of late) expect(payloads).toEqual([changed]);
    pages.push(...late);

    for (const page of pages) page.close();
    ws.close();
    await allEnded(harness);
  });
});

describe('a shared event past the field budget', () => {
  it('gives every subscriber the same single error', async () => {
    const ws = await socket(harness);
    const pages: Raw[] = [];
    for (let i = 0; i < 5; i += 1) {
      pages.push(await sse(harness, PAGE_WITH_NAMES));
      pages.push(ws.subscribe(PAGE_WITH_NAMES));
    }
    await eventually(() => pages.every(({ payloads }) => payloads.length === 1));
    await polledOnce(harness.simulator);
    const before = await executions(harness, 'statusPageChanged');
    const pageEvents = await harness.metric('status_changes_total{type="page"}');
    const [leaf] = leaves(harness);
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [leaf?.id ?? '']: 'major_outage' }),
    );
    await eventually(() => pages.every(({ payloads }) => payloads.length >= 2));
    const exceeded = pages.map(({ payloads }) => JSON.parse(payloads[1] ?? ''));
    for (const payload of exceeded) {
      expect(payload).toEqual(exceeded[0]);
      expect(payload).not.toHaveProperty('data');
      expect(payload.errors).toMatchObject([
        { extensions: { code: 'BAD_USER_INPUT', limit: 'MAX_RESOLVED_FIELDS' } },
      ]);
      expect(payload.errors).toHaveLength(1);
    }
    const events = (await harness.metric('status_changes_total{type="page"}')) - pageEvents;
    expect((await executions(harness, 'statusPageChanged')) - before).toBe(events);
    for (const page of pages) page.close();
    ws.close();
    await allEnded(harness);
  });
});
