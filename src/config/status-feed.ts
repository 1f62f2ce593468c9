import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { DEFAULT_PAGE_SLUG } from '../core/status/model.js';
import { env, httpUrl, requiredUrl, wholeNumber } from './variable.js';

/** Pages one `STATUS_PAGES_FILE` may list: each costs nothing until asked, but its entry is kept. */
const MAX_STATUS_PAGES = 10_000;

/** The poll interval when it follows a TTL of (nearly) zero: not a busy loop. */
const MIN_DEFAULT_POLL_MS = 100;

/**
 * A page's own `pollIntervalMs`, at least: a second. Aggregators poll every 1 to 15 minutes, and a
 * page that needs its changes sooner can push them (its webhook).
 */
const MIN_PAGE_POLL_MS = 1_000;
/** A page's own `pollIntervalMs`, at most: an hour, past which a followed page is hardly followed. */
const MAX_PAGE_POLL_MS = 3_600_000;

/**
 * The share of node's heap limit the status pages may hold by default: a fifth, 56 MiB of the
 * Dockerfile's 280. With the response cache (32 MiB), the parse cache (16 MiB) and an idle gateway
 * (under 50 MiB with the benchmark's simulator in the same heap), it leaves the heap below
 * `SUBSCRIPTION_HEAP_LIMIT`'s 75% with room for the requests in flight: three sweeps of 1,000
 * pages peaked at 68% after a full collection, 37% ten seconds later (docs/performance.md, "Many
 * status pages").
 */
const PAGES_HEAP_SHARE = 1 / 5;

const componentId = z
  .string()
  .min(1, { error: 'must not be empty' })
  .max(64, { error: 'must be at most 64 characters' });

const versionPattern = z.string().transform((source, context) => {
  try {
    const pattern = new RegExp(source);
    if (new RegExp(`${source}|`).exec('')?.length === 1) {
      context.addIssue({ code: 'custom', message: 'must have a capture group: the version' });
    }
    return pattern;
  } catch {
    context.addIssue({ code: 'custom', message: 'must be a regular expression' });
    return z.NEVER;
  }
});

const StatusPage = z.strictObject({
  slug: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, {
    error: 'must be 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit',
  }),
  baseUrl: httpUrl('/api/v2'),
  name: z.string().min(1).max(200).optional(),
  chains: z
    .array(
      z.strictObject({
        chainId: z
          .union([z.string(), z.number()])
          .transform(String)
          .pipe(z.string().regex(/^\d{1,20}$/, { error: 'must be a decimal chain id' })),
        components: z.array(componentId).max(500),
      }),
    )
    .max(1000)
    .default([]),
  versionPattern: versionPattern.optional(),
  pollIntervalMs: z
    .int({ error: 'must be a whole number of milliseconds' })
    .min(MIN_PAGE_POLL_MS, { error: `must be at least ${MIN_PAGE_POLL_MS} (a second)` })
    .max(MAX_PAGE_POLL_MS, { error: `must be at most ${MAX_PAGE_POLL_MS} (an hour)` })
    .optional(),
});

/** `STATUS_PAGES_FILE`: the path of a YAML (or JSON) file, read and checked as it is parsed. */
const pagesFile = z
  .string()
  .transform((file, context): unknown => {
    try {
      return parseYaml(readFileSync(file, 'utf8'));
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      context.addIssue({ code: 'custom', message: `${file} cannot be read: ${reason}` });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .strictObject({ pages: z.array(StatusPage).min(1).max(MAX_STATUS_PAGES) })
      .superRefine(({ pages }, context) => {
        const slugs = new Set<string>();
        const chains = new Map<string, string>();
        pages.forEach((page, i) => {
          if (slugs.has(page.slug)) {
            context.addIssue({
              code: 'custom',
              path: ['pages', i, 'slug'],
              message: 'is a repeat',
            });
          }
          slugs.add(page.slug);
          page.chains.forEach(({ chainId }, j) => {
            const other = chains.get(chainId);
            if (other !== undefined) {
              context.addIssue({
                code: 'custom',
                path: ['pages', i, 'chains', j, 'chainId'],
                message: `is already the chain of page ${other}`,
              });
            }
            chains.set(chainId, page.slug);
          });
        });
      }),
  )
  .transform(({ pages }) => pages);

export const StatusFeed = z
  .object({
    baseUrl: env('STATUS_BASE_URL', httpUrl('/api/v2').optional(), {
      description:
        'The Statuspage v2 feed, ending in `/api/v2`: the one page, slug `default`. Required unless `STATUS_PAGES_FILE` lists the pages (setting both is an error); `npm start` starts a simulator when both are unset.',
    }),
    pages: env('STATUS_PAGES_FILE', pagesFile, {
      unset: 'one page from `STATUS_BASE_URL`, slug `default`',
      description:
        "A YAML or JSON file listing the status pages the graph serves, in order (the first is the default): `pages: [{ slug, baseUrl, name?, chains?: [{ chainId, components: [component ids] }], versionPattern?, pollIntervalMs? }]`. See README.md. A page costs nothing until it is asked for. `pollIntervalMs` (1000 to 3600000, a second to an hour) is how often the documents a subscription follows are read, instead of `STATUS_POLL_INTERVAL_MS`: at 60000, one upstream request a minute per document (a query's refetch meanwhile counts as the poll), where the 10 s TTL alone would cost six; below `STATUS_CACHE_TTL_MS` it is the TTL. Where the feed sends `ETag` or `Last-Modified`, a poll of an unchanged document is a 304: no body, nothing rebuilt.",
    }),
    cacheTtlMs: env('STATUS_CACHE_TTL_MS', wholeNumber(0), {
      default: '10000',
      description: 'How long one fetch of a feed document serves every request.',
    }),
    maxStaleMs: env('STATUS_MAX_STALE_MS', wholeNumber(0), {
      default: '300000',
      description:
        'How long after its fetch a document stands in while the feed fails (`Page.stale` is then true).',
    }),
    pollIntervalMs: env('STATUS_POLL_INTERVAL_MS', wholeNumber(10), {
      unset: '`STATUS_CACHE_TTL_MS` (at least 100)',
      description:
        'While anyone subscribes, how often each feed document the subscriptions need is read to find changes. Reads go through the same cache as queries, so polling costs no upstream request beyond one per `STATUS_CACHE_TTL_MS`; a change reaches subscribers within the longer of the two.',
    }),
    maxBytes: env('STATUS_PAGES_MAX_BYTES', wholeNumber(65_536), {
      unset:
        "a fifth of node's heap limit (`--max-old-space-size`): 56 MiB under the Dockerfile's flags (a 280 MiB heap limit)",
      description:
        "What the status pages held in memory may hold together (their snapshots as estimated from the documents' sizes, 1.5 times a document's body and 10 KiB, 28 KiB per page besides: docs/performance.md): past it, the pages no subscription follows are let go, least recently used first, and fetched again when next asked for. A document that alone would hold more than a sixteenth of it is refused as `UPSTREAM_BAD_RESPONSE`. While the followed pages alone hold this much, a subscription that would follow another is refused with `TOO_MANY_SUBSCRIPTIONS` (`limit: STATUS_PAGES_MAX_BYTES`).",
    }),
    idleMs: env('STATUS_PAGE_IDLE_MS', wholeNumber(1), {
      unset: '`STATUS_MAX_STALE_MS`, at least `STATUS_CACHE_TTL_MS`',
      description:
        'How long a page no subscription follows is kept after it was last asked for: then its snapshots, upstream client and poller are let go (its circuit stays). Past `STATUS_MAX_STALE_MS` its snapshots could no longer stand in for a failing feed anyway.',
    }),
    fetchesPerHost: env('STATUS_FETCHES_PER_HOST', wholeNumber(1), {
      default: '4',
      description:
        "Requests in flight to one status page host at most, for the whole process (every page, field and request on it together; instead of `UPSTREAM_MAX_CONCURRENT_REQUESTS`); more wait their turn for up to the upstream timeout, then fail with `UPSTREAM_UNAVAILABLE`. Four: one page's four documents at once (each document is fetched once at a time, however many ask), what one field fetched from a host before it was bounded for the process.",
    }),
    upstream: z.object({
      timeoutMs: env('STATUS_TIMEOUT_MS', wholeNumber(1), {
        unset: '`UPSTREAM_TIMEOUT_MS`',
        description: '`UPSTREAM_TIMEOUT_MS` for the status feed alone.',
      }),
    }),
  })
  .superRefine(
    ({ baseUrl, pages }, context) => {
      if (baseUrl === undefined && pages === undefined) {
        context.addIssue({
          code: 'custom',
          path: ['baseUrl'],
          message: requiredUrl('status feed'),
        });
      }
      if (baseUrl !== undefined && pages !== undefined) {
        context.addIssue({
          code: 'custom',
          path: ['baseUrl'],
          message:
            'and STATUS_PAGES_FILE are both set: list the page in the file, or unset the file for one page',
        });
      }
    },
    // Set or not is all it asks, so it holds whatever failed.
    { when: () => true },
  )
  .transform(({ baseUrl = '', pages, pollIntervalMs, maxBytes, idleMs, ...feed }) => {
    const only: z.output<typeof StatusPage> = { slug: DEFAULT_PAGE_SLUG, baseUrl, chains: [] };
    return {
      ...feed,
      pages: pages ?? [only],
      pollIntervalMs: pollIntervalMs ?? Math.max(feed.cacheTtlMs, MIN_DEFAULT_POLL_MS),
      maxBytes: maxBytes ?? Math.floor(getHeapStatistics().heap_size_limit * PAGES_HEAP_SHARE),
      idleMs: idleMs ?? Math.max(feed.maxStaleMs, feed.cacheTtlMs),
    };
  })
  .meta({ title: 'Status feed' });
