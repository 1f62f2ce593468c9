/**
 * What a poll of an unchanged status document costs when the feed revalidates (a 304) and when it
 * does not (the whole body, parsed, checked and built again), on real-sized documents
 * (test/fixtures/real-feeds, real-history) and the simulator's realistic page, served over
 * loopback by the simulator: as Statuspage does (a weak ETag, `If-None-Match`), as static files
 * (`Last-Modified`, `If-Modified-Since`), and without validators. Each poll goes through a status
 * feed's snapshot cache (a TTL of 0: every read is a poll), as the poller's do.
 *
 *   npx tsx bench/revalidation.ts [--polls 200] [--rounds 5]
 *
 * Rounds alternate the two pages of a document (the order swapped every round), each `polls`
 * polls; what is quoted is the median of the rounds' mean poll time, and the median time of the
 * work a 304 saves alone (the body's JSON.parse, its zod check and the snapshot's build).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { type SimulatedPage, startSimulator } from '../simulator/src/server.js';
import { createSimulatedFeed, STATUS_FEED_PRESETS } from '../simulator/src/status-feed/fixture.js';
import { loadConfig } from '../src/config.js';
import { buildIncidentHistory, buildSummary } from '../src/providers/statuspage-v2/build.js';
import { WireIncidentHistory, WireSummary } from '../src/providers/statuspage-v2/wire.js';
import { createStatusFeed, type FeedDocument } from '../src/upstreams/status-feed/status-feed.js';

const { values } = parseArgs({
  options: {
    polls: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '5' },
  },
});
const POLLS = Number(values.polls);
const ROUNDS = Number(values.rounds);

const fixture = (path: string): unknown =>
  JSON.parse(readFileSync(new URL(`../test/fixtures/${path}`, import.meta.url), 'utf8'));
const realistic = createSimulatedFeed({ ...STATUS_FEED_PRESETS.realistic });
/** Whole seconds, a minute ago: what a static host sends as `Last-Modified`. */
const written = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);

interface Case {
  readonly name: string;
  readonly document: FeedDocument;
  readonly path: string;
  readonly body: unknown;
  /** How the revalidating page is served: Statuspage's ETag, or a static file's time. */
  readonly validators: 'etag' | 'last-modified';
  readonly rebuild: () => void;
}

const summaryCase = (name: string, body: unknown, validators: Case['validators']): Case => ({
  name,
  document: 'summary',
  path: '/summary.json',
  body,
  validators,
  rebuild: () => buildSummary(WireSummary.parse(JSON.parse(JSON.stringify(body)))),
});

const CASES: Case[] = [
  summaryCase('simulator realistic summary.json', realistic.summary, 'etag'),
  summaryCase('zoom summary.json', fixture('real-feeds/zoom/summary.json'), 'last-modified'),
  summaryCase('twilio summary.json', fixture('real-feeds/twilio/summary.json'), 'last-modified'),
  {
    name: 'twilio incidents.json',
    document: 'incidentHistory',
    path: '/incidents.json',
    body: fixture('real-history/twilio@2023-03-09/incidents.json'),
    validators: 'last-modified',
    rebuild() {
      buildIncidentHistory(WireIncidentHistory.parse(JSON.parse(JSON.stringify(this.body))));
    },
  },
];

const pages: Record<string, SimulatedPage> = {};
for (const [i, { path, body, validators }] of CASES.entries()) {
  pages[`plain-${i}`] = { documents: { [path]: body } };
  pages[`revalidated-${i}`] =
    validators === 'etag' ? realistic : { documents: { [path]: body }, lastModified: written };
}
const simulator = await startSimulator({ statusPages: pages });
const config = loadConfig({
  STATUS_BASE_URL: simulator.statusBaseUrl,
  VERIFY_BASE_URL: simulator.verifyBaseUrl,
}).statusFeed;
const logger = pino({ level: 'silent' });

/** A feed of page `slug` whose every read is a poll. */
const feedOf = (slug: string) =>
  createStatusFeed({
    ...config,
    cacheTtlMs: 0,
    maxStaleMs: 0,
    page: { slug, baseUrl: simulator.statusPageUrl(slug) },
    upstreamName: `status feed ${slug}`,
    logger,
  });

/** The mean ms of a poll of `document`, over `POLLS` polls. */
async function pollTime(feed: ReturnType<typeof feedOf>, document: FeedDocument) {
  const started = performance.now();
  for (let i = 0; i < POLLS; i++) await feed.poll(document);
  return (performance.now() - started) / POLLS;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};
const ms = (value: number) => value.toFixed(3);

console.log(
  `| Document | Body | Poll, whole body (ms) | Poll, 304 (ms) | Parse, check and build alone (ms) |`,
);
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const [i, testCase] of CASES.entries()) {
  const plain = feedOf(`plain-${i}`);
  const revalidated = feedOf(`revalidated-${i}`);
  // Warm both (the first poll of the revalidating page is whole), and the JIT.
  for (let n = 0; n < 20; n++) {
    await plain.poll(testCase.document);
    await revalidated.poll(testCase.document);
  }
  simulator.resetRequests();
  const whole: number[] = [];
  const unchanged: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const first = round % 2 === 0;
    if (first) whole.push(await pollTime(plain, testCase.document));
    unchanged.push(await pollTime(revalidated, testCase.document));
    if (!first) whole.push(await pollTime(plain, testCase.document));
  }
  const path = `/status/revalidated-${i}/api/v2${testCase.path}`;
  const polled = simulator.requestCount(path);
  if (simulator.notModifiedCount(path) !== polled) {
    throw new Error(`${testCase.name}: ${polled - simulator.notModifiedCount(path)} polls not 304`);
  }
  const rebuilds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    for (let n = 0; n < POLLS; n++) testCase.rebuild();
    // The JSON.stringify the rebuild starts from is not part of a poll: timed apart.
    const stringify = performance.now();
    for (let n = 0; n < POLLS; n++) JSON.stringify(testCase.body);
    const ended = performance.now();
    rebuilds.push((stringify - started - (ended - stringify)) / POLLS);
  }
  const bytes = Buffer.byteLength(JSON.stringify(testCase.body));
  console.log(
    `| ${testCase.name} (${testCase.validators === 'etag' ? 'ETag' : 'Last-Modified'}) | ${(bytes / 1024).toFixed(1)} KiB | ${ms(median(whole))} | ${ms(median(unchanged))} | ${ms(median(rebuilds))} |`,
  );
  plain.close();
  revalidated.close();
}
await simulator.close();
