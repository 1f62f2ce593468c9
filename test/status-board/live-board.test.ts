import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { documentIdOf } from '../../src/persisted-documents/manifest.js';
import { ARTIFACTS_DIRECTORY, INSTALL_TIMEOUT_MS, launchChromium } from '../helpers/chromium.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { allEnded, openSubscriptions } from '../helpers/live-subscriptions.js';
import { type PageEntry, statusPagesFile } from '../helpers/status-pages-file.js';
import { readSse } from '../helpers/subscriptions.js';

/**
 * How long the board has to show what a test waits for: the page loads, subscribes and renders in
 * a browser that shares the cores (`expect.poll` gives up after 1 s by default).
 */
const BOARD_POLL = { timeout: 15_000 };

const BOARD_DOCUMENT = 'public/status-board/board.graphql';

/*
 * One browser and one gateway for the file. The gateway serves the simulator's own page alone
 * (`default`) until the tests of several pages add theirs; it allows few subscriptions, which the
 * test of a refused board fills before the board asks.
 */
const POLL_INTERVAL_MS = 300;
/** More than the boards of the other tests hold at once (one each, two while one is replaced). */
const MAX_SUBSCRIPTIONS = 4;
const alpha = createSimulatedFeed();
const beta = createSimulatedFeed();
alpha.summary.page.name = 'Alpha vendor';
beta.summary.page.name = 'Beta vendor';
let browser: Browser;
let harness: Harness;
let pagesFile: string;
let ledgerEntry: PageEntry;

beforeAll(async () => {
  browser = await launchChromium();
  harness = await startHarness({
    simulator: { statusPages: { alpha, beta } },
    env: (simulator) => {
      ledgerEntry = { slug: 'default', baseUrl: simulator.statusBaseUrl };
      pagesFile = statusPagesFile([ledgerEntry]);
      return {
        STATUS_PAGES_FILE: pagesFile,
        STATUS_CACHE_TTL_MS: POLL_INTERVAL_MS,
        STATUS_POLL_INTERVAL_MS: POLL_INTERVAL_MS,
        // The strictest production setting: the board asks by document id.
        PERSISTED_DOCUMENTS_ONLY: true,
        MAX_SUBSCRIPTIONS,
      };
    },
    logLevel: 'silent',
  });
}, INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await browser?.close();
  await harness?.close();
});

/** Where the board asks for `operationName` of its document, by id as only persisted documents are. */
function boardOperationUrl(operationName: string, variables: object): URL {
  const url = new URL('/graphql', harness.origin);
  url.searchParams.set('documentId', documentIdOf(readFileSync(BOARD_DOCUMENT, 'utf8')));
  url.searchParams.set('operationName', operationName);
  url.searchParams.set('variables', JSON.stringify(variables));
  return url;
}

/** Rewrites STATUS_PAGES_FILE and has the gateway read it now (as SIGHUP does). */
function configure(pages: PageEntry[]) {
  writeFileSync(pagesFile, JSON.stringify({ pages }));
  expect(harness.gateway.reloadStatusPages()).toBe(true);
}

describe('the status board in Chromium', () => {
  let page: Page;

  beforeAll(async () => {
    page = await browser.newPage({ viewport: { width: 900, height: 1200 } });
  });
  afterAll(async () => {
    await page?.close();
    await allEnded(harness);
  });

  const screenshot = (name: string) =>
    page.screenshot({
      path: join(ARTIFACTS_DIRECTORY, `status-board-${name}.png`),
      fullPage: true,
    });

  it('renders the banner, the component tree, incidents and maintenances', async () => {
    const failed: string[] = [];
    page.on('requestfailed', (request) => failed.push(request.url()));
    page.on('pageerror', (error) => failed.push(error.message));
    await page.goto(`${harness.origin}/status`);
    await page.locator('.connection[data-state="live"]').waitFor();
    const { summary } = harness.simulator.statusFeed;
    await expect
      .poll(() => page.locator('.banner-text').textContent(), BOARD_POLL)
      .toBe(summary.status.description);
    expect(await page.locator('.page-name').textContent()).toBe(summary.page.name);

    const topLevel = summary.components.filter(
      (component) => component.group_id === null && !component.only_show_if_degraded,
    );
    expect(await page.locator('.components > li').count()).toBe(topLevel.length);
    expect(await page.locator('.incidents > li').count()).toBe(summary.incidents.length);
    expect(await page.locator('.maintenances > li').count()).toBe(
      summary.scheduled_maintenances.length,
    );
    await screenshot('initial');
    expect(failed).toEqual([]);
  });

  it('shows a component status change within seconds, through the subscription', async () => {
    const leaf = harness.simulator.statusFeed.summary.components.find(
      (component) =>
        !component.group && component.status === 'operational' && !component.only_show_if_degraded,
    );
    if (!leaf) throw new Error('the demo feed has an operational component');
    const status = page.locator(`[data-component-id="${leaf.id}"] > .component > .status`);
    expect(await status.getAttribute('data-status')).toBe('OPERATIONAL');
    const updatesBefore = Number(await page.locator('body').getAttribute('data-updates'));

    const changed = Date.now();
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [leaf.id]: 'major_outage' }),
    );
    await status
      .and(page.locator('[data-status="MAJOR_OUTAGE"]'))
      .waitFor({ timeout: POLL_INTERVAL_MS * 2 + 5_000 });
    const latencyMs = Date.now() - changed;
    expect(await status.textContent()).toBe('Major outage');
    expect(Number(await page.locator('body').getAttribute('data-updates'))).toBeGreaterThan(
      updatesBefore,
    );
    // The banner follows the roll-up the feed itself computed.
    expect(await page.locator('.banner-text').textContent()).toBe(
      harness.simulator.statusFeed.summary.status.description,
    );
    await screenshot('after-change');
    // Latency is measured here for the record (the bench measures it properly), never asserted.
    writeFileSync(
      join(ARTIFACTS_DIRECTORY, 'status-board-latency.json'),
      `${JSON.stringify({ pollIntervalMs: POLL_INTERVAL_MS, latencyMs })}\n`,
    );
  });

  it('shows a page that stopped answering with its last known state and when it was last reached', async () => {
    const description = await page.locator('.banner-text').textContent();
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    // Asked as the board asks (only persisted documents are run here).
    const lastSeenAt = await eventually(async () => {
      const url = boardOperationUrl('BoardReachability', { slugs: ['default'] });
      const { data } = (await (await fetch(url)).json()) as {
        data?: { statusOverview: { unreachablePages: { lastSeenAt: string | null }[] } };
      };
      return data?.statusOverview.unreachablePages[0]?.lastSeenAt ?? undefined;
    });
    try {
      await page.reload();
      const card = page.locator('.status-page[data-reachable="false"]');
      await card.waitFor({ timeout: 10_000 });
      expect(await card.locator('.banner-text').textContent()).toBe(description);
      expect(await card.locator('.reachability').textContent()).toMatch(
        /^Not answering: last reached .+; this is its last known state\.$/,
      );
      expect(await card.locator('.reachability').isVisible()).toBe(true);
      expect(await card.locator('.fetched-at').getAttribute('datetime')).toBe(lastSeenAt);
      await screenshot('not-answering');
    } finally {
      harness.simulator.clearFaults();
    }
  });
});

describe('the status board of several pages in Chromium', () => {
  let entries: PageEntry[];

  beforeAll(() => {
    entries = [
      ledgerEntry,
      { slug: 'alpha', baseUrl: harness.simulator.statusPageUrl('alpha') },
      { slug: 'beta', baseUrl: harness.simulator.statusPageUrl('beta') },
    ];
    configure(entries);
  });
  afterAll(() => configure([ledgerEntry]));

  it('shows every configured page in configuration order, or the one ?slug= names', async () => {
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on('pageerror', (error) => failed.push(error.message));
    await page.goto(`${harness.origin}/status`);
    await expect
      .poll(() => page.locator('.status-page .page-name').allTextContents(), BOARD_POLL)
      .toEqual([harness.simulator.statusFeed.summary.page.name, 'Alpha vendor', 'Beta vendor']);
    await page.goto(`${harness.origin}/status?slug=beta`);
    await expect
      .poll(() => page.locator('.status-page .page-name').allTextContents(), BOARD_POLL)
      .toEqual(['Beta vendor']);
    expect(failed).toEqual([]);
    await page.close();
    await allEnded(harness);
  });

  it('shows the pages STATUS_PAGES_FILE lists now: added ones on the next load, removed ones at once', async () => {
    const page = await browser.newPage();
    const ledger = harness.simulator.statusFeed.summary.page.name;
    await page.goto(`${harness.origin}/status`);
    await page.locator('.connection[data-state="live"]').waitFor();
    const gamma = {
      slug: 'gamma',
      baseUrl: harness.simulator.statusPageUrl('gamma'),
      name: 'Gamma vendor',
    };
    configure([...entries, gamma]);
    await page.reload();
    // Gamma has no feed: it shows its configured name, and that it does not answer.
    await expect
      .poll(() => page.locator('.status-page .page-name').allTextContents(), BOARD_POLL)
      .toEqual([ledger, 'Alpha vendor', 'Beta vendor', 'Gamma vendor']);
    await page.locator('[data-slug="gamma"][data-reachable="false"]').waitFor();

    // Beta goes: the board's subscription ends, and it reads the list again without a reload.
    configure(entries.filter((entry) => entry.slug !== 'beta').concat(gamma));
    await expect
      .poll(() => page.locator('.status-page .page-name').allTextContents(), BOARD_POLL)
      .toEqual([ledger, 'Alpha vendor', 'Gamma vendor']);
    await page.locator('.connection[data-state="live"]').waitFor();
    configure(entries);
    await page.close();
    await allEnded(harness);
  });
});

describe('the status board when its subscription is refused, in Chromium', () => {
  it('says why, and tries again after 1 s, then 2 s, then 4 s', async () => {
    // Every subscription the gateway allows is taken: the board's is refused
    // (TOO_MANY_SUBSCRIPTIONS); queries are answered.
    await eventually(async () => (await openSubscriptions(harness)) === 0);
    const taken = await Promise.all(
      Array.from({ length: MAX_SUBSCRIPTIONS }, async () => {
        // As the board subscribes: only persisted documents are run here.
        const controller = new AbortController();
        const url = boardOperationUrl('StatusBoard', { slugs: ['default'] });
        const response = await fetch(url, {
          headers: { accept: 'text/event-stream' },
          signal: controller.signal,
        });
        const subscription = readSse(response, () => controller.abort());
        await subscription.next();
        return subscription;
      }),
    );
    const page = await browser.newPage();
    try {
      const attempts: string[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).searchParams.get('operationName') === 'StatusBoard') {
          attempts.push(request.url());
        }
      });
      // The board's clock is the test's: its waits pass when the test moves it on, not before.
      await page.clock.install();
      await page.clock.pauseAt(Date.now() + 1_000);
      await page.goto(`${harness.origin}/status`);
      const connection = page.locator('.connection[data-state="refused"]');
      for (const [tried, seconds] of [
        [1, 1],
        [2, 2],
        [3, 4],
      ] as const) {
        const waiting = connection.and(page.getByText(`refused, trying again in ${seconds} s`));
        await waiting.waitFor();
        expect(attempts.length).toBe(tried);
        if (tried === 3) break;
        // A moment short of the wait, it still waits: trying again sets the state at once.
        await page.clock.runFor(seconds * 1_000 - 1);
        expect(await waiting.count()).toBe(1);
        expect(attempts.length).toBe(tried);
        await page.clock.runFor(1);
      }
      expect(await page.locator('.problems').textContent()).toBe(
        `The gateway refused to follow these pages: The gateway already serves ${MAX_SUBSCRIPTIONS} subscriptions, as many as it allows. Retry later.`,
      );
    } finally {
      await page.close();
      await Promise.all(taken.map((subscription) => subscription.close()));
    }
    await allEnded(harness);
  });
});
