import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Fault } from '../../../simulator/src/server.js';
import { createSimulatedFeed } from '../../../simulator/src/status-feed/fixture.js';
import { fileClock } from '../../helpers/clock.js';
import { type Harness, startHarness } from '../../helpers/harness.js';
import { listen } from '../../helpers/listen.js';
import { faultPage, pagePath } from '../../helpers/own-pages.js';
import { statusPagesFile } from '../../helpers/status-pages-file.js';

interface FaultCase {
  name: string;
  fault: Fault;
  code: 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_BAD_RESPONSE';
  reason: RegExp;
}

const cases: FaultCase[] = [
  {
    name: 'a 503',
    fault: { kind: 'status', status: 503 },
    code: 'UPSTREAM_UNAVAILABLE',
    reason: /HTTP 503/,
  },
  {
    name: 'a 404',
    fault: { kind: 'status', status: 404 },
    code: 'UPSTREAM_UNAVAILABLE',
    reason: /HTTP 404/,
  },
  {
    name: 'an HTML page',
    fault: { kind: 'html' },
    code: 'UPSTREAM_BAD_RESPONSE',
    reason: /text\/html body that is not valid JSON/,
  },
  {
    name: 'truncated JSON',
    fault: { kind: 'truncated' },
    code: 'UPSTREAM_BAD_RESPONSE',
    reason: /not valid JSON/,
  },
  {
    name: 'an empty 200',
    fault: { kind: 'empty' },
    code: 'UPSTREAM_BAD_RESPONSE',
    reason: /body is empty/,
  },
  {
    name: 'a reset mid-body',
    fault: { kind: 'reset' },
    code: 'UPSTREAM_UNAVAILABLE',
    reason: /connection failed/,
  },
  {
    name: 'no answer in time',
    fault: { kind: 'hang' },
    code: 'UPSTREAM_UNAVAILABLE',
    reason: /no answer within 300 ms/,
  },
];

/*
 * One gateway for the file, of two pages: `default`, which each test points at a feed of its own
 * that nobody has read (`freshFeed`: the pages file written again and read, as on SIGHUP), so that
 * the gateway asks for it as one that has read nothing yet (no snapshot, no conditional request,
 * a circuit of its own); and `nowhere`, where nothing listens. STATUS_MAX_STALE_MS of 60 s, on a
 * clock the tests move (it stands still otherwise); pages are not let go for an hour of it.
 */
const clock = fileClock();
const MAX_STALE_MS = 60_000;

let harness: Harness;
let closedOrigin: string;
let file: string | undefined;
/** Writes the pages file: `default` at `baseUrl`, then `nowhere`. */
function writePages(baseUrl: string): string {
  const pages = [
    { slug: 'default', baseUrl },
    { slug: 'nowhere', baseUrl: `${closedOrigin}/status/api/v2` },
  ];
  if (file === undefined) file = statusPagesFile(pages);
  else writeFileSync(file, JSON.stringify({ pages }));
  return file;
}
let made = 0;
/** Points page `default` at a feed of its own, `feed`; its simulator page's slug. */
function freshFeed(feed = createSimulatedFeed()): string {
  made += 1;
  const slug = `fresh-${made}`;
  harness.simulator.setStatusPage(slug, feed);
  writePages(harness.simulator.statusPageUrl(slug));
  expect(harness.gateway.reloadStatusPages()).toBe(true);
  return slug;
}
/** The path of `document` of the feed `slug`, as the simulator's faults name it. */
const documentOf = (slug: string, document = '/summary.json') => `/${slug}/api/v2${document}`;

beforeAll(async () => {
  // A loopback port that was just free, closed again: nothing listens there.
  const closed = await listen(() => {});
  await closed.close();
  closedOrigin = closed.origin;
  harness = await startHarness({
    env: (simulator) => ({
      UPSTREAM_TIMEOUT_MS: 300,
      STATUS_CACHE_TTL_MS: 0,
      STATUS_MAX_STALE_MS: MAX_STALE_MS,
      STATUS_PAGE_IDLE_MS: 60 * 60_000,
      STATUS_PAGES_FILE: writePages(simulator.statusBaseUrl),
    }),
  });
  // A gateway's first read compiles its way through the code, longer on a busy machine than a
  // test's 300 ms timeout: done here, for no test to count it.
  await harness.execute('{ statusPage { name } }');
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.simulator.clearFaults();
});

describe('status feed faults with no snapshot to fall back on', () => {
  for (const { name, fault, code, reason } of cases) {
    it(`answers ${name} with ${code}, naming the endpoint, and stays up`, async () => {
      const slug = freshFeed();
      const logged = harness.logs.length;
      harness.simulator.setFault('status', documentOf(slug), fault);

      const { status, body } = await harness.execute('{ statusPage { name } }');

      expect(status).toBe(200);
      expect(body.data).toBeNull();
      expect(body.errors).toHaveLength(1);
      const [error] = body.errors ?? [];
      expect(error?.extensions).toEqual({ code, upstream: 'status feed' });
      expect(error?.message).toContain('status feed GET /summary.json');
      expect(error?.message).toMatch(reason);
      expect(error?.path).toEqual(['statusPage']);
      expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|stack|at .*\.ts/);
      // An upstream failure is expected: a warning, not an error-level log line.
      const logs = harness.logs.slice(logged);
      expect(logs.filter((line) => Number(line.level) >= 50)).toEqual([]);
      expect(logs.some((line) => line.msg === 'upstream request failed')).toBe(true);

      harness.simulator.clearFaults();
      const healed = await harness.execute<{ statusPage: { name: string } }>(
        '{ statusPage { name } }',
      );
      expect(healed.body.errors).toBeUndefined();
      expect(healed.body.data?.statusPage.name).toBeTruthy();
    });
  }

  it('answers UPSTREAM_UNAVAILABLE when nothing listens at the feed address', async () => {
    const { body } = await harness.execute('{ statusPage(slug: "nowhere") { name } }');
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(body.errors?.[0]?.message).toContain('the connection failed');
  });

  it('retries a GET after a 5xx and succeeds when the upstream recovers', async () => {
    // UPSTREAM_RETRIES is 2 (the default).
    const slug = freshFeed();
    harness.simulator.setFault(
      'status',
      documentOf(slug),
      { kind: 'status', status: 502 },
      { times: 2 },
    );
    const { body } = await harness.execute<{ statusPage: { name: string } }>(
      '{ statusPage { name } }',
    );
    expect(body.errors).toBeUndefined();
    expect(harness.simulator.requestCount(pagePath(slug))).toBe(3);
  });

  it('gives up after the retry limit', async () => {
    // UPSTREAM_RETRIES is 2 (the default): three requests.
    const slug = freshFeed();
    harness.simulator.setFault('status', documentOf(slug), { kind: 'status', status: 500 });
    const { body } = await harness.execute('{ statusPage { name } }');
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(harness.simulator.requestCount(pagePath(slug))).toBe(3);
  });

  it('does not retry a 4xx', async () => {
    // UPSTREAM_RETRIES is 2.
    const slug = freshFeed();
    harness.simulator.setFault('status', documentOf(slug), { kind: 'status', status: 404 });
    await harness.execute('{ statusPage { name } }');
    expect(harness.simulator.requestCount(pagePath(slug))).toBe(1);
  });

  it('fails only the fields that need the failing endpoint', async () => {
    const feed = createSimulatedFeed();
    const slug = freshFeed(feed);
    harness.simulator.setFault(
      'status',
      documentOf(slug, '/scheduled-maintenances/upcoming.json'),
      { kind: 'status', status: 503 },
    );
    const summaryOnly = await harness.execute(
      '{ statusPage { name scheduledMaintenances { id } } }',
    );
    expect(summaryOnly.body.errors).toBeUndefined();

    const { body } = await harness.execute<{ statusPage: { name: string } }>(
      '{ statusPage { name upcomingMaintenances { id } } }',
    );
    expect(body.errors?.[0]?.path).toEqual(['statusPage', 'upcomingMaintenances']);
    expect(body.errors?.[0]?.message).toContain('GET /scheduled-maintenances/upcoming.json');
    // The rest of the page still answers: one document failing never removes another's data.
    expect(body.data?.statusPage).toEqual({
      name: feed.summary.page.name,
      upcomingMaintenances: null,
    });
  });
});

describe('stale-if-error', () => {
  it('serves the last good snapshot while the feed fails, with its fetch time', async () => {
    // STATUS_MAX_STALE_MS is 60 s.
    const slug = freshFeed();
    const logged = harness.logs.length;
    const good = await harness.execute<{ statusPage: { name: string; fetchedAt: string } }>(
      '{ statusPage { name fetchedAt } }',
    );
    faultPage(harness.simulator, slug, { kind: 'status', status: 503 });

    const stale = await harness.execute<{ statusPage: { name: string; fetchedAt: string } }>(
      '{ statusPage { name fetchedAt } }',
    );
    expect(stale.body.errors).toBeUndefined();
    expect(stale.body.data).toEqual(good.body.data);
    // More reads during the same outage: still one warning, not one per read.
    await harness.executeAfterRefetch('{ statusPage { name } }');
    await harness.executeAfterRefetch('{ statusPage { name } }');
    const logs = (msg: string) => harness.logs.slice(logged).filter((line) => line.msg === msg);
    expect(logs('status feed failed; serving the last good snapshot')).toHaveLength(1);
    harness.simulator.clearFaults();
    await harness.executeAfterRefetch('{ statusPage { name } }');
    expect(logs('status feed answers again')).toHaveLength(1);
  });

  it('stops serving a snapshot older than STATUS_MAX_STALE_MS', async () => {
    // STATUS_MAX_STALE_MS is 60 s.
    const slug = freshFeed();
    const good = await harness.execute('{ statusPage { name } }');
    expect(good.body.errors).toBeUndefined();
    faultPage(harness.simulator, slug, { kind: 'html' });
    clock.advance(MAX_STALE_MS - 1);
    // Still within it: the last good snapshot stands in.
    const within = await harness.execute('{ statusPage { name } }');
    expect(within.body).toEqual(good.body);
    clock.advance(2);
    const { body } = await harness.execute('{ statusPage { name } }');
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
  });
});
