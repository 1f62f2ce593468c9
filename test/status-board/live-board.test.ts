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
import { type PageEntry, statusPagesFile } from '../helpers/status-pages-file.js';

/**
 * How long the board has to show what a test waits for: the page loads, subscribes and renders in
 * a browser that shares the cores (`expect.poll` gives up after 1 s by default).
 */
const BOARD_POLL = { timeout: 15_000 };

const BOARD_DOCUMENT = 'public/status-board/board.graphql';

describe('the status board in Chromium', () => {
  const POLL_INTERVAL_MS = 300;
  let harness: Harness;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    browser = await launchChromium();
    harness = await startHarness({
      env: {
        STATUS_CACHE_TTL_MS: POLL_INTERVAL_MS,
        STATUS_POLL_INTERVAL_MS: POLL_INTERVAL_MS,
        // The strictest production setting: the board asks by document id.
        PERSISTED_DOCUMENTS_ONLY: true,
      },
    });
    page = await browser.newPage({ viewport: { width: 900, height: 1200 } });
  }, INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await harness?.close();
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
      const url = new URL('/graphql', harness.origin);
      url.searchParams.set('documentId', documentIdOf(readFileSync(BOARD_DOCUMENT, 'utf8')));
      url.searchParams.set('operationName', 'BoardReachability');
      url.searchParams.set('variables', JSON.stringify({ slugs: ['default'] }));
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
  let harness: Harness;
  let browser: Browser;
  const alpha = createSimulatedFeed();
  const beta = createSimulatedFeed();

  let pagesFile: string;
  let entries: PageEntry[];

  beforeAll(async () => {
    browser = await launchChromium();
    alpha.summary.page.name = 'Alpha vendor';
    beta.summary.page.name = 'Beta vendor';
    harness = await startHarness({
      simulator: { statusPages: { alpha, beta } },
      env: (simulator) => {
        entries = [
          { slug: 'ledger', baseUrl: simulator.statusBaseUrl },
          { slug: 'alpha', baseUrl: simulator.statusPageUrl('alpha') },
          { slug: 'beta', baseUrl: simulator.statusPageUrl('beta') },
        ];
        pagesFile = statusPagesFile(entries);
        return { STATUS_PAGES_FILE: pagesFile, PERSISTED_DOCUMENTS_ONLY: true };
      },
      logLevel: 'silent',
    });
  }, INSTALL_TIMEOUT_MS);

  /** Rewrites STATUS_PAGES_FILE and has the gateway read it now (as SIGHUP does). */
  function configure(pages: PageEntry[]) {
    writeFileSync(pagesFile, JSON.stringify({ pages }));
    expect(harness.gateway.reloadStatusPages()).toBe(true);
  }
  afterAll(async () => {
    await browser?.close();
    await harness?.close();
  });

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
  });
});

describe('the status board when its subscription is refused, in Chromium', () => {
  let harness: Harness;
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
    // Every subscription is refused (TOO_MANY_SUBSCRIPTIONS); queries are answered.
    harness = await startHarness({ env: { MAX_SUBSCRIPTIONS: 0 }, logLevel: 'silent' });
  }, INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await harness?.close();
  });

  it('says why, and tries again after 1 s, then 2 s, then 4 s', async () => {
    const page = await browser.newPage();
    const attempts: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).searchParams.get('operationName') === 'StatusBoard') {
        attempts.push(request.url());
      }
    });
    await page.goto(`${harness.origin}/status`);
    const connection = page.locator('.connection[data-state="refused"]');
    for (const [tried, seconds] of [
      [1, 1],
      [2, 2],
      [3, 4],
    ] as const) {
      await connection.and(page.getByText(`refused, trying again in ${seconds} s`)).waitFor();
      expect(attempts.length).toBe(tried);
    }
    expect(await page.locator('.problems').textContent()).toBe(
      'The gateway refused to follow these pages: The gateway already serves 0 subscriptions, as many as it allows. Retry later.',
    );
    await page.close();
    // Seven seconds of the board's own back-off, in a browser that shares the cores.
  }, 60_000);
});
