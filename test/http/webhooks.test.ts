/**
 * `POST /webhooks/statuspage/<slug>/<token>`: a page's Statuspage webhook makes the gateway refetch
 * it at once, so that its subscribers hear of a change long before the next poll; anything else
 * sent there fetches nothing and learns nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { type PageEntry, statusPagesFile } from '../helpers/status-pages-file.js';
import { subscribeSse } from '../helpers/subscriptions.js';

/** Long enough that within a test, nothing but a webhook fetches a page again. */
const MINUTE_MS = 60_000;
const TOKEN = 'f3b8c1d2e4a5968778695a4b3c2d1e0f0e1d2c3b4a5968778695a4b3c2d1e0f';
const GAMMA_TOKEN = '0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9';
const DELTA_TOKEN = 'e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8';
const SUMMARY = (slug: string) => `/status/${slug}/api/v2/summary.json`;
const WEBHOOK = (slug: string, token?: string) =>
  `/webhooks/statuspage/${slug}${token === undefined ? '' : `/${token}`}`;

/** What Statuspage sends when a component changes status (its documented shape, trimmed). */
const COMPONENT_UPDATE = JSON.stringify({
  meta: {
    unsubscribe: 'https://status.example.com/?unsubscribe=x',
    documentation: 'https://doers.statuspage.io/customer-notifications/webhooks/',
  },
  page: {
    id: 'j2mfxwj97wnj',
    status_indicator: 'major',
    status_description: 'Partial System Outage',
  },
  component_update: {
    created_at: '2026-11-29T10:00:00.000Z',
    new_status: 'major_outage',
    old_status: 'operational',
    id: 'k7730b5v92bv',
    component_id: 'rb5wq1dczvbm',
  },
  component: {
    created_at: '2026-01-01T00:00:00.000Z',
    id: 'rb5wq1dczvbm',
    name: 'API',
    status: 'major_outage',
  },
});

interface ComponentChange {
  componentStatusChanged: { component: { id: string }; status: string };
}

describe('Statuspage webhooks', () => {
  let harness: Harness;
  const post = (path: string, init: RequestInit = {}) =>
    harness.fetch(path, {
      method: 'POST',
      body: COMPONENT_UPDATE,
      ...init,
      headers: { 'content-type': 'application/json', ...(init.headers ?? {}) },
    });
  /** Reads a page through the gateway: its summary is then held, as a poll or a query leaves it. */
  const read = async (slug: string) => {
    const { body } = await harness.execute(`{ statusPage(slug: "${slug}") { name } }`);
    expect(body.errors).toBeUndefined();
  };

  beforeAll(async () => {
    const pages: (PageEntry & { webhookToken?: string })[] = [
      { slug: 'alpha', baseUrl: '', webhookToken: TOKEN },
      // A page without a token has no webhook.
      { slug: 'beta', baseUrl: '' },
      { slug: 'gamma', baseUrl: '', webhookToken: GAMMA_TOKEN },
      // Never read: its webhooks fetch nothing, and only time them.
      { slug: 'delta', baseUrl: '', webhookToken: DELTA_TOKEN },
    ];
    harness = await startHarness({
      simulator: {
        statusPages: Object.fromEntries(pages.map(({ slug }) => [slug, createSimulatedFeed()])),
      },
      env: (simulator) => ({
        STATUS_PAGES_FILE: statusPagesFile(
          pages.map((page) => ({ ...page, baseUrl: simulator.statusPageUrl(page.slug) })),
        ),
        STATUS_CACHE_TTL_MS: MINUTE_MS,
        STATUS_POLL_INTERVAL_MS: MINUTE_MS,
        LOG_REQUESTS: 'all',
      }),
    });
  });
  afterAll(() => harness.close());

  it('with the right token, gets a change to SSE subscribers long before the next poll', async () => {
    const changes = await subscribeSse<ComponentChange>(
      harness.origin,
      'subscription { componentStatusChanged(slugs: ["alpha"]) { component { id } status } }',
    );
    try {
      // The baseline a change is found against: the poller's first reading, which this joins.
      await read('alpha');
      const leaf = harness.simulator.statusFeed.summary.components.find((c) => c.group_id);
      if (!leaf) throw new Error('no grouped component');
      harness.simulator.updateStatusPage('alpha', (feed) =>
        setComponentStatuses(feed, { [leaf.id]: 'major_outage' }),
      );
      const answer = await post(WEBHOOK('alpha', TOKEN));
      expect(answer.status).toBe(202);
      // The poller would read the page again in a minute: only the webhook's refetch finds this.
      for (;;) {
        const change = (await changes.next())?.data?.componentStatusChanged;
        if (change?.component.id !== leaf.id) continue;
        expect(change.status).toBe('MAJOR_OUTAGE');
        break;
      }
    } finally {
      await changes.close();
    }
  });

  it('takes the token as a bearer token too, for senders that set headers', async () => {
    await read('alpha');
    const before = harness.simulator.requestCount(SUMMARY('alpha'));
    const answer = await post(WEBHOOK('alpha'), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(answer.status).toBe(202);
    await eventually(() => harness.simulator.requestCount(SUMMARY('alpha')) === before + 1);
  });

  it('answers a wrong or missing token, an unknown slug and a page without one alike: 404, nothing fetched', async () => {
    for (const slug of ['alpha', 'beta']) await read(slug);
    const counts = () =>
      ['alpha', 'beta'].map((slug) => harness.simulator.requestCount(SUMMARY(slug)));
    const before = counts();
    const refused = [
      post(WEBHOOK('alpha', `${TOKEN.slice(0, -1)}0`)),
      post(WEBHOOK('alpha', TOKEN.slice(0, 32))),
      post(WEBHOOK('alpha')),
      post(WEBHOOK('alpha', '')),
      post(WEBHOOK('alpha'), { headers: { authorization: `Bearer ${GAMMA_TOKEN}` } }),
      post(`${WEBHOOK('alpha', TOKEN)}/more`),
      post(WEBHOOK('nowhere', TOKEN)),
      post(WEBHOOK('beta', TOKEN)),
      post(WEBHOOK('beta')),
      post(WEBHOOK('', TOKEN)),
    ];
    const answers = await Promise.all(refused);
    const bodies = await Promise.all(answers.map((answer) => answer.json()));
    expect(answers.map((answer) => answer.status)).toEqual(refused.map(() => 404));
    // One answer for all of them: nothing tells a slug that exists from one that does not.
    expect(new Set(bodies.map((body) => JSON.stringify(body)))).toEqual(
      new Set([
        JSON.stringify({
          errors: [
            { message: 'No webhook is served at this path.', extensions: { code: 'NOT_FOUND' } },
          ],
        }),
      ]),
    );
    // A fetch would have started as soon as its webhook was read: the right token's now comes
    // after all of them, and is the one fetch there is.
    expect((await post(WEBHOOK('alpha', TOKEN))).status).toBe(202);
    await eventually(
      () => harness.simulator.requestCount(SUMMARY('alpha')) === (before[0] ?? 0) + 1,
    );
    expect(counts()).toEqual([(before[0] ?? 0) + 1, before[1]]);
  });

  it('refuses other methods with 405', async () => {
    const answer = await harness.fetch(WEBHOOK('alpha', TOKEN));
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('POST');
    expect(await answer.json()).toMatchObject({
      errors: [{ extensions: { code: 'METHOD_NOT_ALLOWED' } }],
    });
  });

  it('costs a page at most two fetches for a burst of webhooks', async () => {
    await read('gamma');
    const before = harness.simulator.requestCount(SUMMARY('gamma'));
    const refetches = (slug: string) =>
      harness.logs.filter(
        (line) => line.msg === 'status page refetched for its webhook' && line.slug === slug,
      ).length;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => post(WEBHOOK('gamma', GAMMA_TOKEN))),
    );
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 202));
    // One at once, and one for those that came after it started, when its second is over.
    await eventually(() => harness.simulator.requestCount(SUMMARY('gamma')) === before + 2);
    // The witness: delta's second webhook is refetched when a second that began after gamma's
    // last one is over, so a third of gamma's, had one been due, would have started before it.
    for (let i = 0; i < 2; i++) {
      expect((await post(WEBHOOK('delta', DELTA_TOKEN))).status).toBe(202);
    }
    await eventually(() => refetches('delta') === 2);
    expect(refetches('gamma')).toBe(2);
    expect(harness.simulator.requestCount(SUMMARY('gamma'))).toBe(before + 2);
  });

  it('refuses a body over MAX_BODY_BYTES with 413, declared or streamed, and fetches nothing', async () => {
    await read('alpha');
    const before = harness.simulator.requestCount(SUMMARY('alpha'));
    const large = 'x'.repeat(262_145);
    const declared = await post(WEBHOOK('alpha', TOKEN), { body: large });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({
      errors: [{ extensions: { code: 'PAYLOAD_TOO_LARGE' } }],
    });
    const chunk = new TextEncoder().encode('x'.repeat(65_536));
    let sent = 0;
    const streamed = await post(WEBHOOK('alpha', TOKEN), {
      body: new ReadableStream({
        pull(controller) {
          if (sent++ < 5) controller.enqueue(chunk);
          else controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect((await post(WEBHOOK('alpha', TOKEN))).status).toBe(202);
    await eventually(() => harness.simulator.requestCount(SUMMARY('alpha')) === before + 1);
  });

  it('never writes the token in a log line or a metric', async () => {
    const lines = harness.rawLogs.filter((line) => line.includes('/webhooks/statuspage/'));
    expect(lines.length).toBeGreaterThan(50);
    expect(harness.rawLogs.filter((line) => line.includes(TOKEN.slice(0, 32)))).toEqual([]);
    for (const token of [GAMMA_TOKEN, DELTA_TOKEN]) {
      expect(harness.rawLogs.filter((line) => line.includes(token.slice(0, 32)))).toEqual([]);
    }
    expect(harness.logs).toContainEqual(
      expect.objectContaining({
        msg: 'request',
        method: 'POST',
        path: '/webhooks/statuspage/alpha/redacted',
        status: 202,
      }),
    );
    const metrics = await (await harness.fetch('/metrics')).text();
    expect(metrics).toContain('route="/webhooks/statuspage",status="202"');
    expect(metrics).not.toContain(TOKEN.slice(0, 32));
  });
});

describe('webhookToken in STATUS_PAGES_FILE', () => {
  const problemsOf = (webhookToken: string): readonly string[] => {
    const file = statusPagesFile([
      { slug: 'alpha', baseUrl: 'https://status.example.com/api/v2', webhookToken } as PageEntry,
    ]);
    try {
      loadConfig({ STATUS_PAGES_FILE: file, VERIFY_BASE_URL: 'https://sourcify.dev/server' });
      return [];
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
  };

  it('takes a random token, and refuses one that is short, guessable or not part of a URL as it is', () => {
    expect(problemsOf(TOKEN)).toEqual([]);
    expect(problemsOf('a1B2-c3D4_e5F6.g7H8~i9J0k1L2m3N4o5P6')).toEqual([]);
    expect(problemsOf(TOKEN.slice(0, 31))).toEqual([
      'STATUS_PAGES_FILE pages[0].webhookToken must be at least 32 characters (openssl rand -hex 32)',
    ]);
    expect(problemsOf('changeme-changeme-changeme-changeme')).toEqual([
      'STATUS_PAGES_FILE pages[0].webhookToken must be random: it has fewer than 10 different characters (openssl rand -hex 32)',
    ]);
    expect(problemsOf(`${TOKEN.slice(0, 40)}/x?y`)).toEqual([
      'STATUS_PAGES_FILE pages[0].webhookToken must be letters, digits and . _ ~ - only: it is part of a URL',
    ]);
  });
});
