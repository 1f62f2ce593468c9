import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import { ARTIFACTS_DIRECTORY, INSTALL_TIMEOUT_MS, launchChromium } from '../helpers/chromium.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';

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
      .poll(() => page.locator('.banner-text').textContent())
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
});

describe('the status board of several pages in Chromium', () => {
  let harness: Harness;
  let browser: Browser;
  const alpha = createSimulatedFeed();
  const beta = createSimulatedFeed();

  beforeAll(async () => {
    browser = await launchChromium();
    alpha.summary.page.name = 'Alpha vendor';
    beta.summary.page.name = 'Beta vendor';
    harness = await startHarness({
      simulator: { statusPages: { alpha, beta } },
      env: (simulator) => ({
        STATUS_PAGES_FILE: statusPagesFile([
          { slug: 'ledger', baseUrl: simulator.statusBaseUrl },
          { slug: 'alpha', baseUrl: simulator.statusPageUrl('alpha') },
          { slug: 'beta', baseUrl: simulator.statusPageUrl('beta') },
        ]),
        PERSISTED_DOCUMENTS_ONLY: true,
      }),
      logLevel: 'silent',
    });
  }, INSTALL_TIMEOUT_MS);
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
      .poll(() => page.locator('.status-page .page-name').allTextContents())
      .toEqual([harness.simulator.statusFeed.summary.page.name, 'Alpha vendor', 'Beta vendor']);
    await page.goto(`${harness.origin}/status?slug=beta`);
    await expect
      .poll(() => page.locator('.status-page .page-name').allTextContents())
      .toEqual(['Beta vendor']);
    expect(failed).toEqual([]);
    await page.close();
  });
});
