import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSimulatedFeed,
  type SimulatedFeed,
} from '../../simulator/src/status-feed/fixture.js';
import type { StatuspageSummary } from '../../simulator/src/status-feed/types.js';
import { ARTIFACTS_DIRECTORY, INSTALL_TIMEOUT_MS, launchChromium } from '../helpers/chromium.js';
import { eventually, sleep } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { type PageEntry, statusPagesFile } from '../helpers/status-pages-file.js';

/*
 * The board of an aggregator: 200 configured pages on one simulated host, most of which never
 * answer (the simulator serves 404 for a slug it has no page for), a few with real or hostile
 * feeds, some tagged.
 */

const PAGE_COUNT = 200;
const SCREEN_SIZE = 24;
const slugOf = (index: number) => `page-${String(index).padStart(3, '0')}`;

/** Every 20th page from the first two is a payments page (the first also infra); every 10th infra. */
function tagsOf(index: number): string[] {
  if (index % 20 === 1) return ['payments', 'infra'];
  if (index % 20 === 2) return ['payments'];
  if (index % 10 === 0) return ['infra'];
  return [];
}

const indexes = Array.from({ length: PAGE_COUNT }, (_, index) => index + 1);
const firstTagged = (tag: string | undefined) =>
  indexes.filter((index) => tagsOf(index)[0] === tag).map(slugOf);
/** The board's order: by first tag, in the order tags first come (payments, infra), untagged last. */
const boardOrder = [...firstTagged('payments'), ...firstTagged('infra'), ...firstTagged(undefined)];
const firstScreen = boardOrder.slice(0, SCREEN_SIZE);
const secondScreen = boardOrder.slice(SCREEN_SIZE, 2 * SCREEN_SIZE);

const realSummary = (name: string) =>
  JSON.parse(
    readFileSync(`test/fixtures/real-feeds/${name}/summary.json`, 'utf8'),
  ) as StatuspageSummary;

const LINK_BODY =
  'We are investigating.\nDetails: https://example.com/incidents/42, and [the postmortem](https://example.com/postmortem "Postmortem").<br>\nNext update within the hour.<br />Thanks.';
const HOSTILE_BODY =
  '<script>window.boardOwned = 1</script><img src=x onerror="window.boardOwned = 2"> [click](javascript:window.boardOwned=3) <b>bold</b>';
const PAGE_UPDATED_AT = '2023-03-09T17:04:05.000Z';

/** A simulated page with an incident whose latest update has `LINK_BODY`, and one of impact none whose latest says `HOSTILE_BODY`. */
function hostileFeed(): SimulatedFeed {
  const feed = createSimulatedFeed();
  const summary = feed.summary;
  summary.page.name = 'Hostile vendor';
  summary.page.updated_at = PAGE_UPDATED_AT;
  const [incident] = summary.incidents;
  if (!incident?.incident_updates[0]) throw new Error('the demo feed has an incident');
  incident.impact = 'minor';
  incident.incident_updates[0].body = LINK_BODY;
  const harmless = structuredClone(incident);
  harmless.id = `${incident.id}x`;
  harmless.name = 'A harmless blip';
  harmless.impact = 'none';
  for (const update of harmless.incident_updates) {
    update.id = `${update.id}x`;
    update.incident_id = harmless.id;
  }
  if (harmless.incident_updates[0]) harmless.incident_updates[0].body = HOSTILE_BODY;
  summary.incidents.push(harmless);
  return feed;
}

/** The slugs of the status pages the simulator was asked for, from `from` on. */
function requestedSlugs(harness: Harness, from: number): Set<string> {
  const slugs = new Set<string>();
  for (const request of harness.simulator.requests.slice(from)) {
    const [, slug] = /^\/status\/([^/]+)\/api\/v2\//.exec(request.path) ?? [];
    if (slug) slugs.add(slug);
  }
  return slugs;
}

describe('the status board of 200 pages in Chromium', () => {
  let harness: Harness;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  let firstScreenRequests = 0;

  beforeAll(async () => {
    browser = await launchChromium();
    const pages: Record<string, SimulatedFeed | { documents: Record<string, unknown> }> = {
      [slugOf(1)]: hostileFeed(),
      [slugOf(2)]: { documents: { '/summary.json': realSummary('openai') } },
      [slugOf(10)]: { documents: { '/summary.json': realSummary('twilio') } },
      [slugOf(21)]: createSimulatedFeed(),
      [slugOf(50)]: { documents: { '/summary.json': realSummary('github') } },
    };
    harness = await startHarness({
      simulator: { statusPages: pages },
      env: (simulator) => ({
        STATUS_PAGES_FILE: statusPagesFile(
          indexes.map(
            (index) =>
              ({
                slug: slugOf(index),
                baseUrl: simulator.statusPageUrl(slugOf(index)),
                tags: tagsOf(index),
              }) as PageEntry,
          ),
        ),
        // One poll a minute: each screen's requests are its first reads, none from a later poll.
        STATUS_CACHE_TTL_MS: 60_000,
        STATUS_POLL_INTERVAL_MS: 60_000,
        PERSISTED_DOCUMENTS_ONLY: true,
      }),
      logLevel: 'silent',
    });
    page = await browser.newPage({
      viewport: { width: 1280, height: 1000 },
      locale: 'en-US',
      timezoneId: 'UTC',
    });
    page.on('pageerror', (error) => errors.push(error.message));
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
  const cardSlugs = () =>
    page.locator('.status-page').evaluateAll((cards) => cards.map((card) => card.dataset.slug));
  /** Every card on screen shows its page, or that the page does not answer. */
  const settled = () =>
    eventually(
      () =>
        page
          .locator('.status-page:not([data-shown="true"]):not([data-reachable="false"])')
          .count()
          .then((count) => count === 0),
      { timeoutMs: 15_000 },
    );
  /** No request to the simulator for a moment (three looks 100 ms apart): the screen's reads are done. */
  async function quiet() {
    let before = harness.simulator.requestCount();
    let still = 0;
    await eventually(async () => {
      await sleep(100);
      const now = harness.simulator.requestCount();
      still = now === before ? still + 1 : 0;
      before = now;
      return still >= 3;
    });
  }

  it('shows the first screen grouped by tag, and asks upstream for its pages alone', async () => {
    await page.goto(`${harness.origin}/status`);
    await eventually(async () => (await cardSlugs()).length === SCREEN_SIZE);
    expect(await cardSlugs()).toEqual(firstScreen);
    // Payments first (its tag comes first), then the first of infra; the rest on later screens.
    expect(await page.locator('.group-name > a').allTextContents()).toEqual(['payments', 'infra']);
    expect(
      await page
        .locator('.group[data-tag="infra"] .status-page')
        .evaluateAll((cards) => cards.map((card) => card.dataset.slug)),
    ).toEqual(firstTagged('infra').slice(0, SCREEN_SIZE - firstTagged('payments').length));
    // A page with two tags shows once, under its first, with both as links.
    expect(await page.locator(`[data-slug="${slugOf(1)}"] .page-tags a`).allTextContents()).toEqual(
      ['payments', 'infra'],
    );
    expect(await page.locator('.total').textContent()).toBe(`${PAGE_COUNT} pages`);
    expect(await page.locator('.tags .tag-link').allTextContents()).toEqual([
      `All ${PAGE_COUNT}`,
      'payments 20',
      'infra 30',
      'No tag 160',
    ]);

    await settled();
    await page.locator('.connection[data-state="live"]').waitFor();
    await quiet();
    expect(requestedSlugs(harness, 0)).toEqual(new Set(firstScreen));
    firstScreenRequests = harness.simulator.requests.length;

    // Pages that never answered say so rather than stay blank.
    const silent = page.locator(`[data-slug="${slugOf(22)}"]`);
    expect(await silent.getAttribute('data-reachable')).toBe('false');
    expect(await silent.locator('.banner-text').textContent()).toBe('Not answering');
    expect(await silent.locator('.reachability').textContent()).toContain(
      'has not reached this page yet',
    );
    // A real page: Twilio's, as of when Twilio says it changed (2023), not when it was fetched.
    const twilio = page.locator(`[data-slug="${slugOf(10)}"]`);
    const twilioUpdatedAt = new Date(realSummary('twilio').page.updated_at).toISOString();
    expect(await twilio.locator('.updated-at').getAttribute('datetime')).toBe(twilioUpdatedAt);
    expect(await twilio.locator('.updated-at').textContent()).toContain('2023');
    await screenshot('200-pages-first-screen');
  });

  it('moves to the next screen, closing the first one’s subscription, and asks for its pages alone', async () => {
    const from = harness.simulator.requests.length;
    await page.locator('.pager .next').click();
    await eventually(async () => (await cardSlugs())[0] === secondScreen[0]);
    expect(new URL(page.url()).search).toBe('?page=2');
    expect(await cardSlugs()).toEqual(secondScreen);
    // Infra goes on from the first screen; untagged pages follow, last.
    expect(await page.locator('.group-name').allTextContents()).toEqual([
      'infra 20 pages (continued)',
      'No tag 160 pages',
    ]);
    await settled();
    await quiet();
    expect(requestedSlugs(harness, from)).toEqual(new Set(secondScreen));
    await screenshot('200-pages-second-screen');
    // For the record, never asserted: what a screen of 24 pages cost upstream.
    writeFileSync(
      join(ARTIFACTS_DIRECTORY, 'status-board-requests.json'),
      `${JSON.stringify({ pages: PAGE_COUNT, screen: SCREEN_SIZE, firstScreenRequests, secondScreenRequests: harness.simulator.requests.length - from })}\n`,
    );

    // Back to the first screen, through the browser's history.
    await page.goBack();
    await eventually(async () => (await cardSlugs())[0] === firstScreen[0]);
  });

  it('lists the pages of one tag, every page that carries it', async () => {
    await page.goto(`${harness.origin}/status?tag=infra`);
    await eventually(async () => (await cardSlugs()).length === SCREEN_SIZE);
    expect(await cardSlugs()).toEqual(
      indexes
        .filter((index) => tagsOf(index).includes('infra'))
        .map(slugOf)
        .slice(0, SCREEN_SIZE),
    );
    expect(await page.locator('.pager .range').textContent()).toBe(
      '1–24 of 30 pages · screen 1 of 2',
    );
  });

  it('says so when ?slug= or ?tag= names nothing configured', async () => {
    // The notice says "Reading the list of pages…" first, while the board reads the directory.
    const notice = (text: string) =>
      page.locator('.notice:not([hidden])', { hasText: text }).waitFor();
    await page.goto(`${harness.origin}/status?slug=nope`);
    await notice('No status page is configured with the slug “nope”.');
    expect(await page.locator('.status-page').count()).toBe(0);
    await page.goto(`${harness.origin}/status?tag=nope`);
    await notice('No status page has the tag “nope”.');
    expect(await page.locator('.status-page').count()).toBe(0);
  });

  it('shows update bodies as Statuspage does, and anything else in them as text', async () => {
    await page.goto(`${harness.origin}/status?slug=${slugOf(1)}`);
    await page.locator('.status-page[data-shown="true"]').waitFor();
    expect(await page.evaluate(() => document.body.dataset.layout)).toBe('single');
    const [linked, hostile] = [
      page.locator('.incidents > li', { hasText: 'We are investigating.' }),
      page.locator('.incidents > li', { hasText: 'A harmless blip' }),
    ];
    const update = linked.locator('.event-update');
    const links = update.locator('a');
    expect(await links.count()).toBe(2);
    expect(await links.nth(0).getAttribute('href')).toBe('https://example.com/incidents/42');
    expect(await links.nth(0).textContent()).toBe('https://example.com/incidents/42');
    expect(await links.nth(1).getAttribute('href')).toBe('https://example.com/postmortem');
    expect(await links.nth(1).textContent()).toBe('the postmortem');
    for (const link of await links.all()) {
      expect(await link.getAttribute('rel')).toBe('noopener noreferrer nofollow');
      expect(await link.getAttribute('target')).toBe('_blank');
    }
    // A newline, `<br>` with its newline, and `<br />`: three breaks, four lines.
    expect(await update.locator('br').count()).toBe(3);
    expect(await update.innerText()).toBe(
      'We are investigating.\nDetails: https://example.com/incidents/42, and the postmortem.\nNext update within the hour.\nThanks.',
    );

    const hostileUpdate = hostile.locator('.event-update');
    expect(await hostileUpdate.textContent()).toBe(HOSTILE_BODY);
    expect(await hostileUpdate.locator('*').count()).toBe(0);
    expect(await page.evaluate(() => (window as { boardOwned?: number }).boardOwned)).toBe(
      undefined,
    );

    // Impact none is no impact; minor is shown.
    expect(await hostile.locator('.event-meta').textContent()).not.toContain('impact');
    expect(await linked.locator('.event-meta').textContent()).toContain('Minor impact');

    // The time shown is when the page says it changed; when it was read is a hint beside it.
    expect(await page.locator('.updated-at').getAttribute('datetime')).toBe(PAGE_UPDATED_AT);
    // en-US in UTC (ICU may put a narrow no-break space before PM).
    expect(await page.locator('.updated-at').textContent()).toMatch(/^Mar 9, 2023, 5:04\sPM$/);
    expect(await page.locator('.as-of').textContent()).toContain('Page updated');
    expect(await page.locator('.fetched-at').getAttribute('datetime')).not.toBe('');
    await screenshot('hostile-page');
  });

  it('shows a real page’s bodies with their breaks and links (OpenAI, Twilio)', async () => {
    await page.goto(`${harness.origin}/status?slug=${slugOf(2)}`);
    await page.locator('.status-page[data-shown="true"]').waitFor();
    const openai = realSummary('openai');
    expect(await page.locator('.incidents > li').count()).toBe(openai.incidents.length);
    // No impact none shown as an impact, and no Markdown left raw.
    expect(await page.locator('.event-meta').allTextContents()).not.toContain(
      expect.stringContaining('None impact'),
    );
    expect(await page.locator('.event-update').allTextContents()).not.toContain(
      expect.stringContaining(']('),
    );
    await screenshot('openai');

    await page.goto(`${harness.origin}/status?slug=${slugOf(10)}`);
    await page.locator('.status-page[data-shown="true"]').waitFor();
    const bodies = await page.locator('.maintenances .event-update').allTextContents();
    expect(bodies.length).toBe(realSummary('twilio').scheduled_maintenances.length);
    expect(bodies.filter((body) => body.includes('<br'))).toEqual([]);
    await screenshot('twilio');
    expect(errors).toEqual([]);
  });
});
