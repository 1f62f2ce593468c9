import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { INSTALL_TIMEOUT_MS, launchChromium } from '../helpers/chromium.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { withOwnPages } from '../helpers/own-pages.js';
import { editServed } from '../helpers/shared-harness.js';

/** Links a feed may write: none but http(s) may reach a reader's browser. */
const SCRIPT = 'javascript:alert(document.domain)';
const HOSTILE = [
  SCRIPT,
  ' JavaScript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'vbscript:msgbox(1)',
  'file:///etc/passwd',
];

interface Linked {
  id: string;
  name: string;
  shortlink: string | null;
}
interface Links {
  statusPage: {
    url: string;
    incidents: Linked[];
    scheduledMaintenances: Linked[];
    incidentHistory: Linked[];
  };
}
const LINKS = `{
  statusPage {
    url
    incidents { id name shortlink }
    scheduledMaintenances { id name shortlink }
    incidentHistory { id name shortlink }
  }
}`;

/** A page whose own URL is not http(s). */
const SCRIPT_URL = 'script-url';
/** A page whose first incident links to a script, for the status board. */
const LINKED = 'script-link';

/*
 * One gateway, which re-reads the feed on every read (a TTL of 0): each test of the default page
 * puts the demo feed back, edits it, and reads once the gateway has read the edit; the others
 * read a page of their own, served hostile from the start.
 */
let harness: Harness;
/** The feed of page `LINKED`. */
const linked = createSimulatedFeed();
beforeAll(async () => {
  const scriptUrl = createSimulatedFeed();
  scriptUrl.summary.page.url = SCRIPT;
  const [first] = linked.summary.incidents;
  if (first) first.shortlink = SCRIPT;
  harness = await startHarness({
    ...withOwnPages(
      { [SCRIPT_URL]: scriptUrl, [LINKED]: linked },
      { env: { STATUS_CACHE_TTL_MS: 0 } },
    ),
  });
});
afterAll(() => harness.close());

describe('URLs a status feed sends', () => {
  beforeEach(() => harness.simulator.setStatusFeed(createSimulatedFeed()));

  it('serves none but http(s): another scheme is null, the item and the document standing', async () => {
    const logged = harness.logs.length;
    const [incident] = harness.simulator.statusFeed.summary.incidents;
    const maintenances = harness.simulator.statusFeed.summary.scheduled_maintenances;
    expect(incident).toBeDefined();
    expect(maintenances.length).toBeGreaterThanOrEqual(2);
    await editServed(harness, (feed) => {
      const [first] = feed.summary.incidents;
      if (first) first.shortlink = SCRIPT;
      for (const [i, maintenance] of feed.summary.scheduled_maintenances.entries()) {
        maintenance.shortlink = HOSTILE[(i + 1) % HOSTILE.length] as string;
      }
      for (const listed of feed.incidentHistory?.incidents ?? []) listed.shortlink = SCRIPT;
    });

    const { body } = await harness.execute<Links>(LINKS);
    expect(body.errors).toBeUndefined();
    const page = body.data?.statusPage;
    expect(page?.url).toBe(harness.simulator.statusFeed.summary.page.url);
    expect(page?.incidents.map(({ id, shortlink }) => ({ id, shortlink }))).toEqual(
      harness.simulator.statusFeed.summary.incidents.map(({ id, shortlink }) => ({
        id,
        shortlink: shortlink === SCRIPT ? null : shortlink,
      })),
    );
    expect(page?.scheduledMaintenances.map((item) => item.shortlink)).toEqual(
      maintenances.map(() => null),
    );
    expect(page?.incidentHistory.length).toBeGreaterThan(0);
    expect(page?.incidentHistory.every((item) => item.shortlink === null)).toBe(true);
    // The other fields of the item are there: only the link is dropped.
    expect(page?.incidents[0]?.name).toBe(incident?.name);

    const one = await harness.execute<{ incident: Linked | null }>(
      'query ($id: ID!) { incident(id: $id) { id shortlink } }',
      { id: incident?.id },
    );
    expect(one.body.data?.incident).toEqual({ id: incident?.id, shortlink: null });
    expect(harness.logs.slice(logged).filter((line) => Number(line.level) >= 50)).toEqual([]);
  });

  it('keeps real pages’ http and https links', async () => {
    const links = ['https://stspg.io/xyz123', 'http://stspg.io/abc'];
    await editServed(harness, (feed) => {
      for (const [i, maintenance] of feed.summary.scheduled_maintenances.entries()) {
        maintenance.shortlink = links[i % links.length] as string;
      }
    });
    const { body } = await harness.execute<Links>(LINKS);
    expect(body.data?.statusPage.scheduledMaintenances.map((item) => item.shortlink)).toEqual(
      harness.simulator.statusFeed.summary.scheduled_maintenances.map(
        (_, i) => links[i % links.length],
      ),
    );
  });
});

describe('a page whose own URL is not http(s)', () => {
  it('does not take a page whose own URL is not http(s) for the feed', async () => {
    const { body } = await harness.execute<Links>(`{ statusPage(slug: "${SCRIPT_URL}") { url } }`);
    expect(body.data).toBeNull();
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(body.errors?.[0]?.message).toMatch(/page\.url/);
  });
});

describe('the status board, given a hostile link', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
  });

  // A browser's first page, on a machine the suite's other files load: it took past 20 s once,
  // beside the APQ flood. What fails it is an incident that never shows, or a link in it.
  it('shows the incident without a link', { timeout: 60_000 }, async () => {
    // biome-ignore lint/style/noNonNullAssertion: the demo feed has an incident
    const incident = linked.summary.incidents[0]!;
    const page = await browser.newPage();
    await page.goto(`${harness.origin}/status?slug=${LINKED}`);
    const item = page.locator(`.incidents > li[data-event-id="${incident.id}"]`);
    await item.waitFor({ timeout: 50_000 });
    expect(await item.locator('.event-title').textContent()).toBe(incident.name);
    expect(await item.locator('a').count()).toBe(0);
    // The board's own links (`/status?tag=…`) are the only ones not to an http(s) address.
    expect(await page.locator('a[href]:not([href^="http"]):not([href^="/status"])').count()).toBe(
      0,
    );
  });
});
