import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionResult } from 'graphql';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { documentIdOf } from '../../src/persisted-documents/manifest.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';
import {
  polledOnce,
  type Received,
  readSse,
  type SseFrame,
  wsClient,
} from '../helpers/subscriptions.js';

/*
 * The subscription hub, the same suite over each of its sinks (SSE and graphql-ws, through the
 * official client): subscribers of one operation share a topic (one execution per change), a late
 * joiner of a whole-state topic starts with the last state of every page, and a subscription with
 * `since` begins with every change found after it (the change between a query and a subscription
 * is never lost).
 */

const TTL_MS = 150;
const COMPONENTS = /* GraphQL */ `
  subscription Components($ids: [ID!], $since: DateTime) {
    componentStatusChanged(ids: $ids, since: $since) { component { id status } previousStatus status detectedAt }
  }
`;
const PAGES = /* GraphQL */ `
  subscription Pages($slugs: [String!]) { statusPageChanged(slugs: $slugs) { slug status { indicator } } }
`;
const PERSISTED = 'subscription Persisted { statusPageChanged { slug name } }';

interface Params {
  readonly query?: string;
  readonly documentId?: string;
  readonly variables?: Record<string, unknown>;
  readonly extensions?: Record<string, unknown>;
}
type Subscriber = Received<ExecutionResult<Record<string, unknown>>>;

let harness: Harness;
let manifest: string;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  manifest = join(mkdtempSync(join(tmpdir(), 'hub-manifest-')), 'persisted-documents.json');
  writeFileSync(manifest, JSON.stringify({ [documentIdOf(PERSISTED)]: PERSISTED }));
  harness = await startHarness({
    simulator: { statusPages: { alpha: createSimulatedFeed(), beta: createSimulatedFeed() } },
    env: (simulator) => ({
      STATUS_PAGES_FILE: statusPagesFile(
        ['ledger', 'alpha', 'beta'].map((slug) => ({
          slug,
          baseUrl: slug === 'ledger' ? simulator.statusBaseUrl : simulator.statusPageUrl(slug),
        })),
      ),
      STATUS_CACHE_TTL_MS: TTL_MS,
      PERSISTED_DOCUMENTS_FILE: manifest,
      MAX_SUBSCRIPTIONS_PER_CLIENT: 1_000,
      MAX_SUBSCRIPTIONS_PER_CONNECTION: 100,
    }),
    logLevel: 'silent',
  });
});
afterAll(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  await harness?.close();
});

const executions = (field: string) =>
  harness.metric(`graphql_subscription_executions_total{field="${field}"}`);

/** A grouped component of the default page that is operational now. */
function leaf(index = 0) {
  const found = harness.simulator.statusFeed.summary.components.filter(
    (c) => !c.group && c.group_id && c.status === 'operational',
  )[index];
  if (!found) throw new Error('no operational grouped component');
  return found.id;
}

/** Subscribes over SSE: a POST of `params` as they are. */
async function overSse(params: Params): Promise<Subscriber> {
  const controller = new AbortController();
  const response = await fetch(`${harness.origin}/graphql`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify(params),
    signal: controller.signal,
  });
  return readSse(response, () => controller.abort());
}

let client: Client | undefined;
/** Subscribes over graphql-ws, with the official client, on one socket for the whole suite. */
function overWebSocket(params: Params): Subscriber {
  client ??= wsClient(harness.origin);
  const socket = client;
  const events: ExecutionResult<Record<string, unknown>>[] = [];
  let done!: () => void;
  const completed = new Promise<void>((resolve) => {
    done = resolve;
  });
  const dispose = socket.subscribe(
    // The official client requires a string query: a persisted document is sent with "".
    { query: '', ...params } as { query: string },
    {
      next: (result) => events.push(result as ExecutionResult<Record<string, unknown>>),
      error: (errors) => {
        events.push({ errors: errors as never });
        done();
      },
      complete: done,
    },
  );
  return receivedOf(events, completed, async () => dispose());
}

function receivedOf(
  events: ExecutionResult<Record<string, unknown>>[],
  completed: Promise<void>,
  close: () => Promise<void>,
): Subscriber {
  let taken = 0;
  const subscriber: Subscriber = {
    events,
    completed,
    close,
    async next(timeoutMs = 5_000) {
      await eventually(() => events.length > taken, { timeoutMs });
      return events[taken++] as ExecutionResult<Record<string, unknown>>;
    },
  };
  closers.push(close);
  return subscriber;
}

const openSubscriptions = async () => {
  const text = await (await harness.fetch('/metrics')).text();
  return [...text.matchAll(/^graphql_subscriptions_open\{[^}]*\} (\d+)$/gm)].reduce(
    (sum, [, value]) => sum + Number(value),
    0,
  );
};

describe.each([
  ['SSE', overSse],
  ['graphql-ws', overWebSocket],
] as const)('the hub over %s', (_transport, subscribe) => {
  const subscribeNow = async (params: Params) => subscribe(params);

  it('shares one execution of each change among the subscribers of an operation; the first event of each says since when it carries every change', async () => {
    const id = leaf();
    const subscribers = await Promise.all(
      Array.from({ length: 5 }, () =>
        subscribeNow({ query: COMPONENTS, variables: { ids: [id] } }),
      ),
    );
    await eventually(async () => (await openSubscriptions()) >= 5);
    await polledOnce(harness.simulator);
    const before = await executions('componentStatusChanged');
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [id]: 'major_outage' }),
    );
    const firsts = await Promise.all(subscribers.map((subscriber) => subscriber.next()));
    for (const first of firsts) {
      expect(first.data).toEqual({
        componentStatusChanged: {
          component: { id, status: 'MAJOR_OUTAGE' },
          previousStatus: 'OPERATIONAL',
          status: 'MAJOR_OUTAGE',
          detectedAt: expect.any(String),
        },
      });
      // The snapshot it started from, which the change came after.
      const change = first.data?.componentStatusChanged as { detectedAt: string } | undefined;
      const detectedAt = change?.detectedAt ?? '';
      const { since } = first.extensions as { since: string };
      expect(Date.parse(since)).toBeLessThan(Date.parse(detectedAt));
    }
    expect((await executions('componentStatusChanged')) - before).toBe(1);

    await polledOnce(harness.simulator);
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [id]: 'operational' }),
    );
    const seconds = await Promise.all(subscribers.map((subscriber) => subscriber.next()));
    // Only the first event says where it starts.
    for (const second of seconds) expect(second).toEqual(seconds[0]);
    expect(seconds[0]).not.toHaveProperty('extensions');
    expect((await executions('componentStatusChanged')) - before).toBe(2);
    await Promise.all(subscribers.map((subscriber) => subscriber.close()));
    await eventually(async () => (await openSubscriptions()) === 0);
  });

  it('starts a late joiner of a topic over several pages with the last state of every page, running nothing again', async () => {
    const variables = { slugs: ['alpha', 'beta', 'ledger'] };
    const first = await subscribeNow({ query: PAGES, variables });
    const slugsOf = (events: ExecutionResult<Record<string, unknown>>[]) =>
      events.map((event) => (event.data?.statusPageChanged as { slug?: string } | undefined)?.slug);
    await eventually(() => first.events.length === 3);
    // In configuration order.
    expect(slugsOf(first.events)).toEqual(['ledger', 'alpha', 'beta']);
    const before = await executions('statusPageChanged');
    const late = await subscribeNow({ query: PAGES, variables });
    await eventually(() => late.events.length === 3);
    expect(late.events).toEqual(first.events);
    expect(await executions('statusPageChanged')).toBe(before);
    await Promise.all([first.close(), late.close()]);
  });

  it('begins a subscription with `since` with the change found between the query it names and it', async () => {
    const id = leaf(1);
    const query = `{ statusPage { fetchedAt components { id status } } }`;
    type Page = { statusPage: { fetchedAt: string; components: { id: string; status: string }[] } };
    const statusOf = (page: Page | null | undefined) =>
      page?.statusPage.components.find((component) => component.id === id)?.status;
    // Nobody subscribes: the page is read by queries alone.
    const answered = (await harness.executeAfterRefetch<Page>(query)).body.data;
    expect(statusOf(answered)).toBe('OPERATIONAL');
    const since = answered?.statusPage.fetchedAt;
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [id]: 'partial_outage' }),
    );
    // A later query reads the page again, past the TTL: the change is found there, for nobody.
    await eventually(
      async () =>
        statusOf((await harness.execute<Page>(query)).body.data) === 'PARTIAL_OUTAGE' || undefined,
    );
    const late = await subscribeNow({ query: COMPONENTS, variables: { ids: [id], since } });
    const first = await late.next();
    expect(first.data?.componentStatusChanged).toMatchObject({
      component: { id, status: 'PARTIAL_OUTAGE' },
      previousStatus: 'OPERATIONAL',
      status: 'PARTIAL_OUTAGE',
    });
    expect(first.extensions).toEqual({ since });

    // Another `since` (after the change) shares its topic: the next change, once for both.
    const after = await subscribeNow({
      query: COMPONENTS,
      variables: { ids: [id], since: new Date().toISOString() },
    });
    await eventually(async () => (await openSubscriptions()) === 2);
    await polledOnce(harness.simulator);
    const before = await executions('componentStatusChanged');
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [id]: 'operational' }),
    );
    for (const subscriber of [late, after]) {
      expect((await subscriber.next()).data?.componentStatusChanged).toMatchObject({
        status: 'OPERATIONAL',
      });
    }
    expect(after.events).toHaveLength(1);
    expect((await executions('componentStatusChanged')) - before).toBe(1);
    await Promise.all([late.close(), after.close()]);
  });

  it('begins with SINCE_UNKNOWN when it no longer knows every change since, then goes on', async () => {
    const id = leaf(2);
    const subscriber = await subscribeNow({
      query: COMPONENTS,
      variables: { ids: [id], since: '2020-01-01T00:00:00.000Z' },
    });
    const first = await subscriber.next();
    expect(first.data ?? undefined).toBeUndefined();
    expect(first.errors).toMatchObject([
      {
        extensions: {
          code: 'SINCE_UNKNOWN',
          since: '2020-01-01T00:00:00.000Z',
          knownSince: expect.any(String),
        },
      },
    ]);
    await polledOnce(harness.simulator);
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [id]: 'degraded_performance' }),
    );
    expect((await subscriber.next()).data?.componentStatusChanged).toMatchObject({
      status: 'DEGRADED_PERFORMANCE',
    });
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [id]: 'operational' }),
    );
    await subscriber.next();
    await subscriber.close();
  });

  it('runs a persisted document by its documentId, and an APQ hash alone, shared with those who send its text', async () => {
    const name = harness.simulator.statusFeed.summary.page.name;
    const byId = await subscribeNow({ documentId: documentIdOf(PERSISTED) });
    expect((await byId.next()).data).toEqual({ statusPageChanged: { slug: 'ledger', name } });

    const text = 'subscription Apq { statusPageChanged { name } }';
    const sha256Hash = createHash('sha256').update(text).digest('hex');
    const persistedQuery = { version: 1, sha256Hash };
    // Registered by a subscriber who sends its text with its hash, then run by its hash alone.
    const registered = await subscribeNow({ query: text, extensions: { persistedQuery } });
    expect((await registered.next()).data).toEqual({ statusPageChanged: { name } });
    const byHash = await subscribeNow({ extensions: { persistedQuery } });
    expect((await byHash.next()).data).toEqual({ statusPageChanged: { name } });
    await Promise.all([byId.close(), registered.close(), byHash.close()]);
  });
});

describe('a subscription Yoga serves itself (an Accept that names more than event streams)', () => {
  /** Subscribes with `accept` as it is: the front door hands such a request to Yoga whole. */
  async function direct(accept: string, params: Params) {
    const controller = new AbortController();
    const response = await fetch(`${harness.origin}/graphql`, {
      method: 'POST',
      headers: { accept, 'content-type': 'application/json' },
      body: JSON.stringify(params),
      signal: controller.signal,
    });
    closers.push(() => controller.abort());
    return { response, close: () => controller.abort() };
  }

  it('is admitted and counted, begins with the changes after its since, and ends when its client goes', async () => {
    const id = leaf(3);
    const since = new Date().toISOString();
    // Nobody follows the page: queries read it, until one reads it as it stands after `since`.
    await eventually(async () => {
      const { body } = await harness.execute<{ statusPage: { fetchedAt: string } }>(
        '{ statusPage { fetchedAt } }',
      );
      const fetchedAt = body.data?.statusPage.fetchedAt;
      return (fetchedAt !== undefined && fetchedAt > since) || undefined;
    });
    // Found for nobody, after `since`.
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [id]: 'major_outage' }),
    );
    const query = `{ statusPage { components { id status } } }`;
    await eventually(
      async () =>
        JSON.stringify((await harness.execute(query)).body).includes('MAJOR_OUTAGE') || undefined,
    );
    const { response, close } = await direct('text/event-stream, application/json', {
      query: COMPONENTS,
      variables: { ids: [id], since },
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect((await readSse(response).next()).data).toMatchObject({
      componentStatusChanged: { previousStatus: 'OPERATIONAL', status: 'MAJOR_OUTAGE' },
    });
    await eventually(async () => (await openSubscriptions()) === 1);
    close();
    await eventually(async () => (await openSubscriptions()) === 0);
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [id]: 'operational' }),
    );
  });

  it('is not held open when Yoga cannot stream it to what the client accepts', async () => {
    const ended = () =>
      harness.metric(
        'graphql_subscriptions_ended_total{field="statusPageChanged",transport="http",reason="client"}',
      );
    const before = await ended();
    const { response } = await direct('multipart/mixed', { query: PAGES });
    expect(response.status).toBe(406);
    // It was opened (its subscribe ran), and ended with its answer.
    await eventually(async () => (await ended()) === before + 1);
    expect(await openSubscriptions()).toBe(0);
  });
});

describe('keep-alives', () => {
  /** An SSE subscription's raw text as it comes (keep-alive comments included). */
  async function rawSse(params: Params) {
    const controller = new AbortController();
    closers.push(() => controller.abort());
    const response = await fetch(`${harness.origin}/graphql`, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify(params),
      signal: controller.signal,
    });
    return readSse(response);
  }

  it("reach every member of a shared topic (the source's, a round beside the payloads)", async () => {
    // NODE_ENV=test: Yoga's keep-alive every 300 ms. Three members of one topic, each its own
    // request: the first runs the source, the others only join it.
    const params = { query: PAGES, variables: { slugs: ['beta'] } };
    const members = [await rawSse(params), await rawSse(params), await rawSse(params)];
    const pings = (member: { frames: SseFrame[] }) =>
      member.frames.filter(({ comment }) => comment === '').length;
    // Each answer begins with one comment and its first event; more comments come only from
    // the source's keep-alives, passed on to every member.
    const counts = await eventually(() => {
      const each = members.map(pings);
      return each.every((count) => count >= 3) ? each : undefined;
    });
    expect(counts).toHaveLength(3);
    for (const member of members)
      expect(member.events[0]?.data).toHaveProperty('statusPageChanged');
  });
});
