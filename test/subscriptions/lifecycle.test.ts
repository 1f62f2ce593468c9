import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { testClock } from '../helpers/clock.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { allEnded } from '../helpers/live-subscriptions.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';
import { polledOnce, subscribeSse, subscribeWs, wsClient } from '../helpers/subscriptions.js';
import { sourceInput } from '../helpers/verification-inputs.js';

const COMPONENT_CHANGES = 'subscription { componentStatusChanged { status } }';
const PAGE = 'subscription { statusPageChanged { status { indicator } } }';
const PENDING_VERIFICATION = /* GraphQL */ `
  mutation ($input: VerifyFromSourceInput!) {
    verifyContractFromSource(input: $input) { __typename ... on VerificationPending { verificationId } }
  }
`;
const JOB_CHANGES = 'subscription ($id: ID!) { verificationJobChanged(id: $id) { __typename } }';
/** Where the simulator serves page `slug`'s documents. */
const documentOf = (slug: string, document: string) => `/status/${slug}/api/v2/${document}`;

// Shutting down ends the gateway: one of its own, quiesced once for the streams open before and one
// opened after.
describe('shutting down with subscriptions open', () => {
  it('completes every stream (SSE and graphql-ws, status and a verification job), one opened while shutting down at once, closes the sockets with 1001, and drains', async () => {
    // A verification answers at once with its job, which stays pending.
    const harness = await startHarness({ env: { VERIFY_WAIT_MS: 50 }, logLevel: 'silent' });
    harness.simulator.verification.setJobDelay(null);
    const { body } = await harness.execute<{
      verifyContractFromSource: { __typename: string; verificationId: string };
    }>(PENDING_VERIFICATION, { input: sourceInput() });
    expect(body.data?.verifyContractFromSource.__typename).toBe('VerificationPending');
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
    const job = subscribeWs<{ verificationJobChanged: { __typename: string } }>(
      client,
      JOB_CHANGES,
      { id: body.data?.verifyContractFromSource.verificationId },
    );
    await wsPage.next();
    expect((await job.next()).data?.verificationJobChanged.__typename).toBe('VerificationPending');

    // As main.ts does on SIGTERM.
    harness.gateway.quiesce();
    // Opened while shutting down, before the listener closes: completed at once.
    const late = await subscribeSse(harness.origin, COMPONENT_CHANGES);
    await late.completed;
    expect(late.completedByServer).toBe(true);
    // Resolves once every connection is gone; nothing waits for the grace period.
    await harness.drain(60_000);
    await Promise.all([
      sse.completed,
      page.completed,
      ws.completed,
      wsPage.completed,
      job.completed,
    ]);
    expect(sse.completedByServer).toBe(true);
    expect(page.completedByServer).toBe(true);
    expect(await closedWith).toBe(1001);
    // graphql-ws completed all three before the socket closed: none ended in an error. All have
    // ended (awaited above), by a `complete` or an `error`, so an error would be recorded by now.
    expect([ws.failure, wsPage.failure, job.failure]).toEqual([undefined, undefined, undefined]);
    // The job's watch ended with the gateway, after its one event.
    expect(job.events).toHaveLength(1);

    await harness.gateway.close();
    await harness.simulator.close();
  });
});

/*
 * The other tests share one gateway, its settings merged: each follows a page of its own where it
 * edits a feed or counts its requests, and ends its subscriptions and sockets (`allEnded`), so
 * that the next one's counts start from zero.
 */

/** Subscriptions at once: the polling test holds 11 (a witness, 5 over SSE, 5 over graphql-ws). */
const MAX_SUBSCRIPTIONS = 11;
/** Within the budget for a page's top-level components (7 fields), not for all of them. */
const MAX_RESOLVED_FIELDS = 10;
const TTL_MS = 100;

let harness: Harness;
/** The feeds of the pages the tests follow alone (the default page, `ledger`, is the simulator's own). */
const feeds = {
  budget: createSimulatedFeed(),
  polled: createSimulatedFeed(),
  witness: createSimulatedFeed(),
};

beforeAll(async () => {
  harness = await startHarness({
    simulator: { statusPages: feeds },
    env: (simulator) => ({
      STATUS_PAGES_FILE: statusPagesFile([
        {
          slug: 'ledger',
          baseUrl: simulator.statusBaseUrl,
          chains: [
            { chainId: 295, components: [simulator.statusFeed.summary.components[0]?.id ?? ''] },
          ],
        },
        ...Object.keys(feeds).map((slug) => ({ slug, baseUrl: simulator.statusPageUrl(slug) })),
      ]),
      STATUS_CACHE_TTL_MS: TTL_MS,
      MAX_RESOLVED_FIELDS,
      MAX_SUBSCRIPTIONS,
    }),
    logLevel: 'info',
  });
});
afterAll(() => harness?.close());

/** The lines logged since `from` (an index of `harness.logs`) with message `message`. */
const linesSince = (from: number, message: string) =>
  harness.logs.slice(from).filter((line) => line.msg === message);

describe('subscription limits, metrics and logs', () => {
  it('refuses past MAX_SUBSCRIPTIONS, counts them by field, transport and reason, and logs open and close', async () => {
    const from = harness.logs.length;
    const ended = (labels: string) =>
      harness.metric(`graphql_subscriptions_ended_total{${labels}}`);
    const endedBefore = await Promise.all([
      ended('field="componentStatusChanged",transport="http",reason="client"'),
      ended('field="statusPageChanged",transport="websocket",reason="client"'),
      ended('field="statusPageChanged",transport="http",reason="refused"'),
    ]);
    const refusedBefore = await harness.metric(
      'graphql_errors_total{code="TOO_MANY_SUBSCRIPTIONS"}',
    );

    const first = await subscribeSse(harness.origin, COMPONENT_CHANGES, undefined, {
      headers: { 'x-request-id': 'sub-first' },
    });
    const client = wsClient(harness.origin, { headers: { 'x-request-id': 'sub-socket' } });
    const second = subscribeWs(client, PAGE);
    await second.next();
    // As many more as the limit leaves, of another field and transport than the two counted.
    const others = [];
    for (let i = 2; i < MAX_SUBSCRIPTIONS; i += 1)
      others.push(await subscribeSse(harness.origin, PAGE));
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
    await Promise.all(others.map((other) => other.close()));
    // The server sees an SSE client go when its connection closes.
    await allEnded(harness);
    expect(
      await Promise.all([
        ended('field="componentStatusChanged",transport="http",reason="client"'),
        ended('field="statusPageChanged",transport="websocket",reason="client"'),
        ended('field="statusPageChanged",transport="http",reason="refused"'),
      ]),
    ).toEqual(endedBefore.map((count) => count + 1));
    expect(
      await harness.metric(
        `graphql_subscriptions_open{field="componentStatusChanged",transport="http"}`,
      ),
    ).toBe(0);
    expect(
      (await harness.metric('graphql_errors_total{code="TOO_MANY_SUBSCRIPTIONS"}')) - refusedBefore,
    ).toBe(1);

    expect(linesSince(from, 'subscription opened')).toEqual(
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
    expect(linesSince(from, 'subscription closed')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          requestId: 'sub-first',
          reason: 'client',
          ms: expect.any(Number),
        }),
        expect.objectContaining({ requestId: 'sub-socket', reason: 'client' }),
      ]),
    );
    expect(linesSince(from, 'subscription refused')).toMatchObject([
      { limit: 'MAX_SUBSCRIPTIONS' },
    ]);
    expect(linesSince(from, 'websocket opened')).toMatchObject([{ requestId: 'sub-socket' }]);
  });

  it('never serves a subscription from the response cache', async () => {
    const reads = (result: string) =>
      harness.metric(`response_cache_reads_total{result="${result}"}`);
    const [hits, stored] = await Promise.all([reads('hit'), reads('stored')]);
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
    expect(await reads('hit')).toBe(hits);
    expect(await reads('stored')).toBe(stored);
    await allEnded(harness);
  });
});

describe('limits per event', () => {
  it('gives each event of a subscription its own field budget: one too large is an error, the next is sent', async () => {
    const portal = feeds.budget.summary.components.find((c) => c.name === 'Developer Portal');
    const pages = await subscribeSse<{ statusPageChanged: { components: { id: string }[] } }>(
      harness.origin,
      'subscription ($all: Boolean!) { statusPageChanged(slugs: ["budget"]) { components(topLevel: $all) { id } } }',
      { all: true },
    );
    // 7 fields per event: within the budget of 10 for each event, not for two together.
    expect((await pages.next()).data?.statusPageChanged.components).toHaveLength(5);
    await polledOnce(harness.simulator, [documentOf('budget', 'summary.json')]);
    harness.simulator.updateStatusPage('budget', (feed) =>
      setComponentStatuses(feed, { [portal?.id ?? '']: 'major_outage' }),
    );
    expect((await pages.next()).data?.statusPageChanged.components).toHaveLength(5);

    const everything = await subscribeSse(
      harness.origin,
      'subscription { statusPageChanged(slugs: ["budget"]) { components { id name status } } }',
    );
    expect((await everything.next()).errors).toMatchObject([
      { extensions: { code: 'BAD_USER_INPUT', limit: 'MAX_RESOLVED_FIELDS' } },
    ]);
    await Promise.all([pages.close(), everything.close()]);
    await allEnded(harness);
  });
});

describe('errors beside the data', () => {
  it('come with each subscription event whose fields reported them, once each', async () => {
    const portal = harness.simulator.statusFeed.summary.components.find(
      (c) => c.name === 'Developer Portal',
    );
    // The page's chains come from the verification service's list: without it, an empty list with
    // an error beside it, as in a query.
    harness.simulator.setFault('verify', '/chains', { kind: 'status', status: 503 });
    try {
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
    } finally {
      harness.simulator.clearFaults();
    }
    await allEnded(harness);
  });
});

describe('polling', () => {
  it('reads the feed only while someone subscribes, and with queries costs one summary request per TTL', async () => {
    // Before the pages of this test are first read: their caches take the clock they find then.
    const clock = testClock();
    const from = harness.logs.length;
    // A second page, followed all along: its polls show that a poller of the first would have
    // read by now.
    const requests = () => harness.simulator.requestCount(documentOf('polled', 'summary.json'));
    const witnessed = () => harness.simulator.requestCount(documentOf('witness', 'summary.json'));
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
        clock.advance(TTL_MS);
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

    const polled = 'subscription { componentStatusChanged(slugs: ["polled"]) { status } }';
    const subscribers = await Promise.all(
      Array.from({ length: 5 }, () => subscribeSse(harness.origin, polled)),
    );
    const client = wsClient(harness.origin);
    const socketSubscribers = Array.from({ length: 5 }, () => subscribeWs(client, polled));
    await eventually(() => requests() === 1);
    await landed('polled');
    for (let ttls = 1; ttls <= 5; ttls += 1) {
      // However many query within a TTL, the snapshot on hand answers them all...
      await Promise.all(
        Array.from({ length: 20 }, () =>
          harness.execute('{ statusPage(slug: "polled") { status { indicator } } }'),
        ),
      );
      expect(requests()).toBe(ttls);
      // ...and past it, the poller reads the feed again, once, with no query asking.
      clock.advance(TTL_MS);
      await eventually(() => requests() === ttls + 1);
      await landed('polled');
    }
    // The other documents are polled only for the subscriptions that need them.
    expect(harness.simulator.requestCount(documentOf('polled', 'incidents.json'))).toBe(0);

    await Promise.all([...subscribers, ...socketSubscribers].map((s) => s.close()));
    await client.dispose();
    // The server sees an SSE client go when its connection closes.
    const closed = () => linesSince(from, 'subscription closed').length;
    await eventually(() => closed() >= 10);
    expect(closed()).toBe(10);
    const polls = requests();
    await twoPollsLater();
    expect(requests()).toBe(polls);
    await witness.close();
    await allEnded(harness);
  });
});
