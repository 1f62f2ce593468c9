import { describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { testClock } from '../helpers/clock.js';
import { eventually } from '../helpers/eventually.js';
import { startHarness } from '../helpers/harness.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';
import { polledOnce, subscribeSse, subscribeWs, wsClient } from '../helpers/subscriptions.js';

const COMPONENT_CHANGES = 'subscription { componentStatusChanged { status } }';
const PAGE = 'subscription { statusPageChanged { status { indicator } } }';
const SUMMARY = '/status/api/v2/summary.json';
const WITNESS_SUMMARY = '/status/witness/api/v2/summary.json';

describe('shutting down with subscriptions open', () => {
  it('completes every stream (SSE and graphql-ws), closes the sockets with 1001, and drains', async () => {
    const harness = await startHarness({ logLevel: 'silent' });
    const sse = await subscribeSse(harness.origin, COMPONENT_CHANGES);
    const page = await subscribeSse(harness.origin, PAGE, undefined, { method: 'GET' });
    await page.next();
    // Not lazy: the client would close the socket itself once its subscriptions completed.
    const client = wsClient(harness.origin, { lazy: false });
    const closedWith = new Promise<number>((resolve) =>
      client.on('closed', (event) => resolve((event as { code: number }).code)),
    );
    const ws = subscribeWs(client, COMPONENT_CHANGES);
    const wsPage = subscribeWs(client, PAGE);
    await wsPage.next();

    // As main.ts does on SIGTERM.
    harness.gateway.quiesce();
    // Resolves once every connection is gone; nothing waits for the grace period.
    await harness.drain(60_000);
    await Promise.all([sse.completed, page.completed, ws.completed, wsPage.completed]);
    expect(sse.completedByServer).toBe(true);
    expect(page.completedByServer).toBe(true);
    expect(await closedWith).toBe(1001);
    // graphql-ws completed both before the socket closed: neither ended in an error. Both have
    // ended (awaited above), by a `complete` or an `error`, so an error would be recorded by now.
    expect([ws.failure, wsPage.failure]).toEqual([undefined, undefined]);

    await harness.gateway.close();
    await harness.simulator.close();
  });

  it('completes a subscription opened while shutting down at once', async () => {
    const harness = await startHarness({ logLevel: 'silent' });
    harness.gateway.quiesce();
    const late = await subscribeSse(harness.origin, COMPONENT_CHANGES);
    await late.completed;
    expect(late.completedByServer).toBe(true);
    await harness.close();
  });
});

describe('subscription limits, metrics and logs', () => {
  it('refuses past MAX_SUBSCRIPTIONS, counts them by field, transport and reason, and logs open and close', async () => {
    const harness = await startHarness({ env: { MAX_SUBSCRIPTIONS: 2 } });
    const first = await subscribeSse(harness.origin, COMPONENT_CHANGES, undefined, {
      headers: { 'x-request-id': 'sub-first' },
    });
    const client = wsClient(harness.origin, { headers: { 'x-request-id': 'sub-socket' } });
    const second = subscribeWs(client, PAGE);
    await second.next();
    expect(
      await harness.metric(
        `graphql_subscriptions_open{field="componentStatusChanged",transport="http"}`,
      ),
    ).toBe(1);
    expect(
      await harness.metric(
        `graphql_subscriptions_open{field="statusPageChanged",transport="websocket"}`,
      ),
    ).toBe(1);

    const third = await subscribeSse(harness.origin, PAGE);
    expect((await third.next()).errors).toMatchObject([
      { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', limit: 'MAX_SUBSCRIPTIONS' } },
    ]);
    await third.completed;

    await first.close();
    await second.close();
    await client.dispose();
    // The server sees an SSE client go when its connection closes.
    await eventually(
      () => harness.logs.filter((line) => line.msg === 'subscription closed').length >= 2,
    );
    const ended = (labels: string) =>
      harness.metric(`graphql_subscriptions_ended_total{${labels}}`);
    expect(await ended('field="componentStatusChanged",transport="http",reason="client"')).toBe(1);
    expect(await ended('field="statusPageChanged",transport="websocket",reason="client"')).toBe(1);
    expect(await ended('field="statusPageChanged",transport="http",reason="refused"')).toBe(1);
    expect(
      await harness.metric(
        `graphql_subscriptions_open{field="componentStatusChanged",transport="http"}`,
      ),
    ).toBe(0);
    expect(await harness.metric('graphql_errors_total{code="TOO_MANY_SUBSCRIPTIONS"}')).toBe(1);

    const lines = (message: string) => harness.logs.filter((line) => line.msg === message);
    expect(lines('subscription opened')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          requestId: 'sub-first',
          subscription: 'componentStatusChanged',
          transport: 'http',
        }),
        expect.objectContaining({
          requestId: 'sub-socket',
          subscription: 'statusPageChanged',
          transport: 'websocket',
        }),
      ]),
    );
    expect(lines('subscription closed')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          requestId: 'sub-first',
          reason: 'client',
          ms: expect.any(Number),
        }),
        expect.objectContaining({ requestId: 'sub-socket', reason: 'client' }),
      ]),
    );
    expect(lines('subscription refused')).toMatchObject([{ limit: 'MAX_SUBSCRIPTIONS' }]);
    expect(lines('websocket opened')).toMatchObject([{ requestId: 'sub-socket' }]);
    await harness.close();
  });

  it('never serves a subscription from the response cache', async () => {
    const harness = await startHarness({ logLevel: 'silent' });
    for (let i = 0; i < 3; i += 1) {
      const response = await harness.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: PAGE }),
      });
      await response.body?.cancel();
      const stream = await subscribeSse(harness.origin, PAGE);
      await stream.next();
      await stream.close();
    }
    expect(await harness.metric('response_cache_reads_total{result="hit"}')).toBe(0);
    expect(await harness.metric('response_cache_reads_total{result="stored"}')).toBe(0);
    await harness.close();
  });
});

describe('limits per event', () => {
  it('gives each event of a subscription its own field budget: one too large is an error, the next is sent', async () => {
    const harness = await startHarness({
      env: { STATUS_CACHE_TTL_MS: 150, MAX_RESOLVED_FIELDS: 10 },
      logLevel: 'silent',
    });
    const portal = harness.simulator.statusFeed.summary.components.find(
      (c) => c.name === 'Developer Portal',
    );
    const pages = await subscribeSse<{ statusPageChanged: { components: { id: string }[] } }>(
      harness.origin,
      'subscription ($all: Boolean!) { statusPageChanged { components(topLevel: $all) { id } } }',
      { all: true },
    );
    // 7 fields per event: within the budget of 10 for each event, not for two together.
    expect((await pages.next()).data?.statusPageChanged.components).toHaveLength(5);
    await polledOnce(harness.simulator);
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [portal?.id ?? '']: 'major_outage' }),
    );
    expect((await pages.next()).data?.statusPageChanged.components).toHaveLength(5);

    const everything = await subscribeSse(
      harness.origin,
      'subscription { statusPageChanged { components { id name status } } }',
    );
    expect((await everything.next()).errors).toMatchObject([
      { extensions: { code: 'BAD_USER_INPUT', limit: 'MAX_RESOLVED_FIELDS' } },
    ]);
    await Promise.all([pages.close(), everything.close()]);
    await harness.close();
  });
});

describe('errors beside the data', () => {
  it('come with each subscription event whose fields reported them, once each', async () => {
    const harness = await startHarness({
      env: (simulator) => ({
        STATUS_CACHE_TTL_MS: 150,
        STATUS_PAGES_FILE: statusPagesFile([
          {
            slug: 'ledger',
            baseUrl: simulator.statusBaseUrl,
            chains: [
              { chainId: 295, components: [simulator.statusFeed.summary.components[0]?.id ?? ''] },
            ],
          },
        ]),
      }),
      logLevel: 'silent',
    });
    const portal = harness.simulator.statusFeed.summary.components.find(
      (c) => c.name === 'Developer Portal',
    );
    // The page's chains come from the verification service's list: without it, an empty list with
    // an error beside it, as in a query.
    harness.simulator.setFault('verify', '/chains', { kind: 'status', status: 503 });
    const pages = await subscribeSse<{ statusPageChanged: { chains: { id: string }[] } }>(
      harness.origin,
      'subscription { statusPageChanged { status { indicator } chains { id } } }',
    );
    const first = await pages.next();
    expect(first.data?.statusPageChanged.chains).toEqual([]);
    expect(first.errors).toMatchObject([
      { path: ['statusPageChanged', 'chains'], extensions: { code: 'UPSTREAM_UNAVAILABLE' } },
    ]);
    await polledOnce(harness.simulator);
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [portal?.id ?? '']: 'major_outage' }),
    );
    // The next event reports its own error once: the first event's is not carried over.
    const second = await pages.next();
    expect(second.data?.statusPageChanged.chains).toEqual([]);
    expect(second.errors).toHaveLength(1);
    await pages.close();
    await harness.close();
  });
});

describe('polling', () => {
  it('reads the feed only while someone subscribes, and with queries costs one summary request per TTL', async () => {
    const clock = testClock();
    const ttl = 100;
    // A second page, followed all along: its polls show that a poller of the first would have
    // read by now.
    const harness = await startHarness({
      simulator: { statusPages: { witness: createSimulatedFeed() } },
      env: (simulator) => ({
        STATUS_PAGES_FILE: statusPagesFile([
          { slug: 'ledger', baseUrl: simulator.statusBaseUrl },
          { slug: 'witness', baseUrl: simulator.statusPageUrl('witness') },
        ]),
        STATUS_CACHE_TTL_MS: ttl,
      }),
      logLevel: 'info',
    });
    const requests = () => harness.simulator.requestCount(SUMMARY);
    const witnessed = () => harness.simulator.requestCount(WITNESS_SUMMARY);
    /**
     * Resolves once page `slug` serves a snapshot fetched now: the read the poller started has
     * landed, so that moving the clock on makes it old.
     */
    const landed = (slug: string) =>
      eventually(async () => {
        const { body } = await harness.execute<{ statusPage: { fetchedAt: string } }>(
          `{ statusPage(slug: "${slug}") { fetchedAt } }`,
        );
        return body.data?.statusPage.fetchedAt === new Date().toISOString();
      });
    /** Two polls' worth of time: twice past the TTL, each time until the witness page is read. */
    const twoPollsLater = async () => {
      for (let i = 0; i < 2; i += 1) {
        const seen = witnessed();
        clock.advance(ttl);
        await eventually(() => witnessed() > seen);
        await landed('witness');
      }
    };
    const witness = await subscribeSse(
      harness.origin,
      'subscription { componentStatusChanged(slugs: ["witness"]) { status } }',
    );
    await eventually(() => witnessed() > 0);
    await landed('witness');
    await twoPollsLater();
    expect(requests()).toBe(0);

    const subscribers = await Promise.all(
      Array.from({ length: 5 }, () => subscribeSse(harness.origin, COMPONENT_CHANGES)),
    );
    const client = wsClient(harness.origin);
    const socketSubscribers = Array.from({ length: 5 }, () =>
      subscribeWs(client, COMPONENT_CHANGES),
    );
    await eventually(() => requests() === 1);
    await landed('ledger');
    for (let ttls = 1; ttls <= 5; ttls += 1) {
      // However many query within a TTL, the snapshot on hand answers them all...
      await Promise.all(
        Array.from({ length: 20 }, () =>
          harness.execute('{ statusPage { status { indicator } } }'),
        ),
      );
      expect(requests()).toBe(ttls);
      // ...and past it, the poller reads the feed again, once, with no query asking.
      clock.advance(ttl);
      await eventually(() => requests() === ttls + 1);
      await landed('ledger');
    }
    // The other documents are polled only for the subscriptions that need them.
    expect(harness.simulator.requestCount('/status/api/v2/incidents.json')).toBe(0);

    await Promise.all([...subscribers, ...socketSubscribers].map((s) => s.close()));
    await client.dispose();
    // The server sees an SSE client go when its connection closes.
    const closed = () => harness.logs.filter((line) => line.msg === 'subscription closed').length;
    await eventually(() => closed() >= 10);
    expect(closed()).toBe(10);
    const polled = requests();
    await twoPollsLater();
    expect(requests()).toBe(polled);
    await witness.close();
    await harness.close();
  });
});
