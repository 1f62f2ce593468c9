import { renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { Client } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../simulator/src/server.js';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { MAX_PAGES_FILE_BYTES, readPagesFile } from '../../src/config/status-feed.js';
import { eventually } from '../helpers/eventually.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { type PageEntry, statusPagesFile } from '../helpers/status-pages-file.js';
import { subscribeSse, subscribeWs, wsClient } from '../helpers/subscriptions.js';

/*
 * STATUS_PAGES_FILE read again while the gateway runs: edited as an operator edits it, through the
 * production listener, against the simulator's pages.
 */

const SLUGS = ['alpha', 'beta', 'gamma', 'delta'] as const;

interface PageAnswer {
  statusPage: { slug: string; name: string } | null;
}

const PAGE_QUERY = 'query ($slug: String) { statusPage(slug: $slug) { slug name } }';

describe('STATUS_PAGES_FILE read again', () => {
  let harness: Harness;
  let file: string;
  let entryOf: (slug: string, extra?: Partial<PageEntry>) => PageEntry;
  const clients: Client[] = [];

  /** Writes the file as an editor saves it: a new file renamed over the old one. */
  const save = (content: string | { pages: readonly PageEntry[] }) => {
    const next = `${file}.new`;
    writeFileSync(next, typeof content === 'string' ? content : JSON.stringify(content));
    renameSync(next, file);
  };
  const logged = (message: string) => harness.logs.filter((line) => line.msg === message);
  const reloads = () => logged('status pages reloaded').length;
  const problemLines = () =>
    logged('STATUS_PAGES_FILE has problems: the status pages stay as they were');
  const page = async (slug?: string) =>
    (await harness.execute<PageAnswer>(PAGE_QUERY, slug === undefined ? {} : { slug })).body;

  beforeAll(async () => {
    harness = await startHarness({
      simulator: {
        statusPages: Object.fromEntries(SLUGS.map((slug) => [slug, createSimulatedFeed()])),
      },
      env: (simulator) => {
        entryOf = (slug, extra = {}) => ({
          slug,
          baseUrl: simulator.statusPageUrl(slug),
          ...extra,
        });
        file = statusPagesFile([entryOf('alpha'), entryOf('beta')]);
        return { STATUS_PAGES_FILE: file, STATUS_CACHE_TTL_MS: 100 };
      },
    });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.dispose()));
    // Every test starts from alpha and beta.
    const before = reloads();
    save({ pages: [entryOf('alpha'), entryOf('beta')] });
    await eventually(() => reloads() > before);
  });
  afterAll(() => harness.close());

  it('serves a page added to the file, and its first page becomes the default', async () => {
    expect((await page('gamma')).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    save({ pages: [entryOf('gamma', { name: 'Gamma' }), entryOf('alpha'), entryOf('beta')] });
    const body = await eventually(async () => {
      const answer = await page('gamma');
      return answer.data?.statusPage ? answer : undefined;
    });
    expect(body.data?.statusPage).toEqual({ slug: 'gamma', name: 'Gamma' });
    expect((await page()).data?.statusPage?.slug).toBe('gamma');
    const list = await harness.execute<{ statusPages: { slug: string }[] }>(
      '{ statusPages { slug } }',
    );
    expect(list.body.data?.statusPages.map(({ slug }) => slug)).toEqual(['gamma', 'alpha', 'beta']);
    expect(logged('status pages reloaded').at(-1)).toMatchObject({
      file,
      trigger: 'change',
      pages: 3,
      added: 1,
      removed: 0,
      changed: 0,
      slugs: { added: ['gamma'] },
    });
  });

  it('refuses a removed page and completes its subscriptions, over SSE and WebSocket, saying why', async () => {
    const query = (slug: string) =>
      `subscription { statusPageChanged(slugs: ["${slug}"]) { slug } }`;
    const sse = await subscribeSse<{ statusPageChanged: { slug: string } }>(
      harness.origin,
      query('beta'),
    );
    const client = wsClient(harness.origin);
    clients.push(client);
    const ws = subscribeWs<{ statusPageChanged: { slug: string } }>(client, query('beta'));
    // Of a page that stays: it goes on.
    const alpha = subscribeWs<{ statusPageChanged: { slug: string } }>(client, query('alpha'));
    for (const subscriber of [sse, ws, alpha]) {
      expect((await subscriber.next()).data?.statusPageChanged).toBeDefined();
    }

    const releasedBefore = await harness.metric('status_pages_released_total{reason="removed"}');
    save({ pages: [entryOf('alpha')] });
    await Promise.all([sse.completed, ws.completed]);
    expect(sse.completedByServer).toBe(true);
    const expected = {
      extensions: { code: 'STATUS_PAGES_CHANGED', reason: 'page-removed', slugs: ['beta'] },
    };
    expect((await sse.next()).errors).toMatchObject([expected]);
    expect((await ws.next()).errors).toMatchObject([expected]);
    // graphql-ws completed it: it did not end in an error.
    expect(await Promise.race([ws.error.then(() => 'error'), 'completed'])).toBe('completed');

    expect((await page('beta')).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect((await page('alpha')).data?.statusPage?.slug).toBe('alpha');
    const closed = logged('subscription closed').filter((line) => line.reason === 'page-removed');
    expect(closed.map((line) => line.transport).sort()).toEqual(['http', 'websocket']);
    expect(logged('status pages reloaded').at(-1)).toMatchObject({
      removed: 1,
      subscriptionsEnded: 2,
      slugs: { removed: ['beta'] },
    });
    for (const transport of ['http', 'websocket']) {
      expect(
        await harness.metric(
          `graphql_subscriptions_ended_total{field="statusPageChanged",transport="${transport}",reason="page-removed"}`,
        ),
      ).toBe(1);
    }
    expect(await harness.metric('status_pages_released_total{reason="removed"}')).toBe(
      releasedBefore + 1,
    );
    // The subscription of the page that stays was not ended.
    expect(closed).toHaveLength(2);
    expect(alpha.events).toHaveLength(1);
    await alpha.close();
  });

  it('updates a name in place, and ends the subscriptions of a page whose feed changed', async () => {
    const sse = await subscribeSse<{ statusPageChanged: { slug: string } }>(
      harness.origin,
      'subscription { statusPageChanged(slugs: ["alpha", "beta"]) { slug } }',
    );
    await sse.next();
    await sse.next();

    save({ pages: [entryOf('alpha', { name: 'Alpha' }), entryOf('beta')] });
    await eventually(async () => (await page('alpha')).data?.statusPage?.name === 'Alpha');
    expect(logged('status pages reloaded').at(-1)).toMatchObject({ updated: 1, changed: 0 });
    expect(sse.completedByServer).toBe(false);

    // Beta served from another page of the simulator: a feed of its own, made anew.
    save({
      pages: [
        entryOf('alpha', { name: 'Alpha' }),
        entryOf('beta', { baseUrl: harness.simulator.statusPageUrl('delta') }),
      ],
    });
    await sse.completed;
    expect((await sse.next()).errors).toMatchObject([
      { extensions: { code: 'STATUS_PAGES_CHANGED', reason: 'page-changed', slugs: ['beta'] } },
    ]);
    expect(logged('status pages reloaded').at(-1)).toMatchObject({
      changed: 1,
      subscriptionsEnded: 1,
    });
    harness.simulator.resetRequests();
    expect((await page('beta')).data?.statusPage?.slug).toBe('beta');
    expect(harness.simulator.requestCount('/status/delta/api/v2/summary.json')).toBe(1);
  });

  it('keeps the pages as they were when the file has problems, and logs each with its path', async () => {
    const before = problemLines().length;
    save({
      pages: [
        entryOf('alpha'),
        { slug: 'gamma', baseUrl: 'ftp://example.com/api/v2' },
        entryOf('delta', { chains: [{ chainId: 'one', components: [] }] }),
      ],
    });
    const warning = await eventually(
      () => problemLines()[before] as Record<string, unknown> | undefined,
    );
    expect(warning).toMatchObject({
      level: 40,
      file,
      problems: [
        'pages[1].baseUrl must be an http(s) URL',
        'pages[2].chains[0].chainId must be a decimal chain id',
      ],
    });
    expect((await page('beta')).data?.statusPage?.slug).toBe('beta');
    expect((await page('gamma')).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    save('pages: [ {');
    await eventually(() => problemLines()[before + 1]);
    expect(problemLines().at(-1)?.problems).toEqual([expect.stringMatching(/cannot be parsed: /)]);
  });

  it('refuses a file larger than its cap, and one that never ends, before reading it whole', async () => {
    const before = problemLines().length;
    save(' '.repeat(MAX_PAGES_FILE_BYTES + 1));
    await eventually(() => problemLines()[before]);
    rmSync(file);
    symlinkSync('/dev/zero', file);
    await eventually(() => problemLines()[before + 1]);
    expect(
      problemLines()
        .slice(before)
        .map((line) => line.problems),
    ).toEqual([
      [expect.stringMatching(/cannot be read: larger than 4194304 bytes$/)],
      [expect.stringMatching(/cannot be read: not a regular file$/)],
    ]);
    rmSync(file);
    expect((await page('beta')).data?.statusPage?.slug).toBe('beta');
  });

  it('reads a file rewritten a hundred times in a row once per interval', async () => {
    const before = reloads();
    for (let i = 0; i < 100; i += 1) {
      save({ pages: [entryOf('alpha', { name: `Alpha ${i}` }), entryOf('beta')] });
    }
    await eventually(async () => (await page('alpha')).data?.statusPage?.name === 'Alpha 99');
    expect(reloads() - before).toBeLessThanOrEqual(3);
  });

  it('names at most 20 pages in metrics, however many reloads bring new ones first', async () => {
    expect((await page('alpha')).data?.statusPage?.slug).toBe('alpha');
    for (let i = 0; i < 25; i += 1) {
      // Every page at alpha's feed: what counts is how many slugs were served, and labelled.
      const fresh = { slug: `fresh-${i}`, baseUrl: harness.simulator.statusPageUrl('alpha') };
      writeFileSync(file, JSON.stringify({ pages: [fresh, entryOf('alpha'), entryOf('beta')] }));
      expect(harness.gateway.reloadStatusPages()).toBe(true);
      expect((await page(fresh.slug)).data?.statusPage?.slug).toBe(fresh.slug);
    }
    const text = await (await harness.fetch('/metrics')).text();
    const upstreams = new Set(
      [
        ...text.matchAll(
          /^upstream_request_duration_seconds_count\{upstream="(status_feed[^"]*)"/gm,
        ),
      ].map(([, upstream]) => upstream),
    );
    // Twenty slugs of their own for the life of the process (alpha, beta, and those served first,
    // here or in the tests before), the rest `other`.
    expect(upstreams.size).toBeLessThanOrEqual(21);
    expect(upstreams).toContain('status_feed_other');
    expect(upstreams).toContain('status_feed_alpha');
    expect(upstreams).not.toContain('status_feed_fresh-24');
  });

  it('reads it again when told (what SIGHUP does), the same file changing nothing', async () => {
    const before = reloads();
    expect(harness.gateway.reloadStatusPages()).toBe(true);
    expect(logged('status pages reloaded').at(-1)).toMatchObject({
      trigger: 'SIGHUP',
      added: 0,
      removed: 0,
      changed: 0,
      updated: 0,
    });
    expect(reloads()).toBe(before + 1);
  });
});

describe('STATUS_PAGES_FILE read again by the production entry', () => {
  let simulator: Simulator;
  let gateway: GatewayProcess | undefined;
  beforeAll(async () => {
    simulator = await startSimulator({
      statusPages: { alpha: createSimulatedFeed(), beta: createSimulatedFeed() },
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await simulator.close();
  });

  it('reads it on SIGHUP, and when it changes', async () => {
    const entry = (slug: string) => ({ slug, baseUrl: simulator.statusPageUrl(slug) });
    const file = statusPagesFile([entry('alpha')]);
    gateway = await startGatewayProcess(
      'reload',
      { STATUS_PAGES_FILE: file, VERIFY_BASE_URL: simulator.verifyBaseUrl },
      // A heap of 120 MiB, which the parse of a 1.6 MB YAML file would run out of.
      { nodeFlags: ['--max-semi-space-size=8', '--max-old-space-size=96'] },
    );
    const reloaded = () => gateway?.logged('status pages reloaded') ?? [];
    process.kill(gateway.pid, 'SIGHUP');
    expect(await eventually(() => reloaded()[0])).toMatchObject({
      trigger: 'SIGHUP',
      added: 0,
      removed: 0,
      changed: 0,
      updated: 0,
    });

    writeFileSync(file, JSON.stringify({ pages: [entry('alpha'), entry('beta')] }));
    expect(await eventually(() => reloaded()[1])).toMatchObject({ trigger: 'change', added: 1 });
    const { body } = await gateway.execute<PageAnswer>(PAGE_QUERY, { slug: 'beta' });
    expect(body.data?.statusPage?.slug).toBe('beta');

    // 10,000 pages in YAML, 1.6 MB: refused before it is parsed, and the gateway serves on.
    const yaml = Array.from(
      { length: 10_000 },
      (_, i) =>
        `  - slug: page-${i}\n    name: Page number ${i} of the ten thousand an aggregator follows, each with a name this long\n    baseUrl: ${simulator.statusPageUrl('alpha')}`,
    );
    writeFileSync(file, `pages:\n${yaml.join('\n')}\n`);
    const problems = await eventually(
      () =>
        gateway?.logged('STATUS_PAGES_FILE has problems: the status pages stay as they were')[0]
          ?.problems,
    );
    expect(problems).toEqual([
      expect.stringMatching(
        /cannot be parsed: parsing it as YAML would take about \d+ MiB of heap/,
      ),
    ]);
    const after = await gateway.execute<PageAnswer>(PAGE_QUERY, { slug: 'beta' });
    expect(after.body.data?.statusPage?.slug).toBe('beta');
  });
});

describe('readPagesFile', () => {
  it('reads JSON, and YAML whose flow style starts with a brace as JSON does', () => {
    const json = statusPagesFile([{ slug: 'a', baseUrl: 'https://a.example.com/api/v2/' }]);
    expect(readPagesFile(json).pages).toEqual([
      { slug: 'a', baseUrl: 'https://a.example.com/api/v2', chains: [], tags: [] },
    ]);
    writeFileSync(json, '{ pages: [{ slug: b, baseUrl: "https://b.example.com/api/v2" }] }');
    expect(readPagesFile(json).pages?.map(({ slug }) => slug)).toEqual(['b']);
  });
});
