import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { DEFAULT_PAGE_SLUG } from '../core/status/model.js';
import { HEAP_LIMIT, liveHeapBytes } from '../observability/live-heap.js';
import { PROVIDER_NAMES, providerOf } from '../providers/providers.js';
import { fileProblems, parseProblem } from './file-problems.js';
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

/** The fewest characters a `webhookToken` has: 32 hex digits are 128 bits. */
const MIN_WEBHOOK_TOKEN_LENGTH = 32;

/**
 * The fewest different characters a `webhookToken` has: a made-up or repeated word
 * (`changeme-changeme-…`, `aaaa…`) has fewer, a random one more (64 random hex digits have fewer
 * once in 10^12 draws; 32 of them once in 10^4, when the message says to draw again).
 */
const MIN_WEBHOOK_TOKEN_SYMBOLS = 10;

/**
 * A page's webhook secret: what admits `POST /webhooks/statuspage/<slug>/<token>`. It travels in
 * a URL (Statuspage signs nothing and sends no header of the subscriber's), so it is made of the
 * characters a path carries as they are.
 */
const webhookToken = z
  .string()
  .min(MIN_WEBHOOK_TOKEN_LENGTH, {
    error: `must be at least ${MIN_WEBHOOK_TOKEN_LENGTH} characters (openssl rand -hex 32)`,
  })
  .max(256, { error: 'must be at most 256 characters' })
  .regex(/^[A-Za-z0-9._~-]+$/, {
    error: 'must be letters, digits and . _ ~ - only: it is part of a URL',
  })
  .refine((token) => new Set(token).size >= MIN_WEBHOOK_TOKEN_SYMBOLS, {
    error: `must be random: it has fewer than ${MIN_WEBHOOK_TOKEN_SYMBOLS} different characters (openssl rand -hex 32)`,
  });

const StatusPage = z
  .strictObject({
    slug: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, {
      error:
        'must be 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit',
    }),
    /** The page's feed format, one of `providers/providers.ts`; absent, Statuspage v2. */
    provider: z
      .enum(PROVIDER_NAMES, { error: `must be one of ${PROVIDER_NAMES.join(', ')}` })
      .optional(),
    /** Checked against its provider's `baseUrlPath` below. */
    baseUrl: httpUrl(),
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
    webhookToken: webhookToken.optional(),
    tags: z
      .array(
        z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, {
          error:
            'must be 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit',
        }),
      )
      .max(20)
      .default([])
      .transform((tags) => [...new Set(tags)]),
    pollIntervalMs: z
      .int({ error: 'must be a whole number of milliseconds' })
      .min(MIN_PAGE_POLL_MS, { error: `must be at least ${MIN_PAGE_POLL_MS} (a second)` })
      .max(MAX_PAGE_POLL_MS, { error: `must be at most ${MAX_PAGE_POLL_MS} (an hour)` })
      .optional(),
  })
  .superRefine(
    ({ baseUrl, provider }, context) => {
      // Checked whatever else of the entry failed, as every problem is reported together.
      if (typeof baseUrl !== 'string' || !URL.canParse(baseUrl)) return;
      const { baseUrlPath } = providerOf(PROVIDER_NAMES.find((name) => name === provider));
      if (!new URL(baseUrl).pathname.replace(/\/+$/, '').endsWith(baseUrlPath)) {
        context.addIssue({
          code: 'custom',
          path: ['baseUrl'],
          message: `must end in ${baseUrlPath}`,
        });
      }
    },
    { when: () => true },
  );

/** What a file of pages is checked as: each page's rules, and those between the pages. */
const PagesDocument = z
  .strictObject({
    pages: z
      .array(StatusPage)
      .min(1, { error: 'lists no page: list one at least' })
      .max(MAX_STATUS_PAGES),
  })
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
  });

/** One page of `STATUS_PAGES_FILE`, as read and checked. */
export type StatusPageEntry = z.output<typeof StatusPage>;

/** A problem of a file of pages: where in it (`pages[3].baseUrl`, empty for the whole file). */
export interface PagesFileProblem {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** `STATUS_PAGES_FILE` read: its pages, or every problem found in it, each with its path. */
export type PagesFileRead =
  | { readonly pages: readonly StatusPageEntry[]; readonly problems?: undefined }
  | { readonly pages?: undefined; readonly problems: readonly PagesFileProblem[] };

/**
 * The largest `STATUS_PAGES_FILE` read, 4 MiB: 10,000 pages of 400 bytes each (a page with a name,
 * tags and a chain is about 200). Past it the file is refused before it is parsed, so that a file
 * that never ends (a device, a file being written without end) costs at most this much.
 */
export const MAX_PAGES_FILE_BYTES = 4 * 1024 * 1024;

/**
 * The heap one byte of YAML takes while the `yaml` library parses it: its document and syntax tree
 * hold about 70 (a file of 10,000 pages, 2 MB, needed a heap of 150 to 160 MiB; 1 MB, 60 to 80
 * MiB), rounded up.
 */
const YAML_HEAP_PER_BYTE = 100;

/**
 * The heap one byte of JSON may take once parsed, at worst: 4 MiB of empty objects (`[{},{},…]`,
 * 1.4 million of them) held 100 MiB, 24 a byte; a real file of pages, a few.
 */
const JSON_HEAP_PER_BYTE = 32;

/** The share of the heap limit a file's parse may take the heap to. */
const PARSE_HEAP_SHARE = 0.9;

/**
 * Reads and checks the pages file `file`: the same rules at start and on every reload. Whatever is
 * wrong is returned, never thrown: a file that cannot be read (missing, not a regular file, larger
 * than `MAX_PAGES_FILE_BYTES`), text that is neither JSON nor YAML, a file whose parse the heap
 * has no room for, or every problem of its pages, each with its path.
 */
export function readPagesFile(file: string): PagesFileRead {
  let text: string;
  try {
    text = readCapped(file, MAX_PAGES_FILE_BYTES);
  } catch (error) {
    return { problems: [{ path: [], message: `${file} cannot be read: ${firstLine(error)}` }] };
  }
  let document: unknown;
  try {
    document = parsePagesText(text);
  } catch (error) {
    return {
      problems: [{ path: [], message: `${file} cannot be parsed: ${parseProblem(error, text)}` }],
    };
  }
  const checked = PagesDocument.safeParse(document);
  if (checked.success) return { pages: checked.data.pages };
  return { problems: fileProblems(PagesDocument, document, checked.error.issues) };
}

/** A problem as the configuration's errors and the reload's log line write it. */
export const describeProblem = ({ path, message }: PagesFileProblem): string =>
  [z.core.toDotPath([...path]), message].filter(Boolean).join(' ');

/**
 * JSON as JSON (a fraction of YAML's cost, and the file a script writes of thousands of pages),
 * anything else as YAML, each admitted by the heap its parse may take at worst.
 */
function parsePagesText(text: string): unknown {
  const bytes = Buffer.byteLength(text);
  if (text.trimStart().startsWith('{')) {
    admitParse('JSON', bytes * JSON_HEAP_PER_BYTE);
    try {
      return JSON.parse(text);
    } catch {
      // YAML's flow style starts with a brace too: `{ pages: [...] }`.
    }
  }
  admitParse('YAML', bytes * YAML_HEAP_PER_BYTE);
  return parseYaml(text);
}

/** Throws when the heap has no room for `cost` more bytes below `PARSE_HEAP_SHARE` of its limit. */
function admitParse(format: 'JSON' | 'YAML', cost: number): void {
  const line = PARSE_HEAP_SHARE * HEAP_LIMIT;
  if (cost < line && liveHeapBytes(line - cost) + cost <= line) return;
  throw new Error(
    `parsing it as ${format} would take about ${Math.ceil(cost / 2 ** 20)} MiB of heap, more than is free: ${format === 'YAML' ? 'write it as JSON, or ' : ''}give node a larger heap`,
  );
}

/**
 * The text of `file` (a regular file: a FIFO, opened without blocking, or a device is refused), or
 * an error when it is larger than `maxBytes`, checked as it is read, however it grows meanwhile.
 */
function readCapped(file: string, maxBytes: number): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw new Error('not a regular file');
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > maxBytes) throw new Error(`larger than ${maxBytes} bytes`);
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

const firstLine = (error: unknown) =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0];

/** `STATUS_PAGES_FILE`: the path of a YAML (or JSON) file, read and checked as it is parsed. */
const pagesFile = z.string().transform((file, context) => {
  const read = readPagesFile(file);
  for (const { path, message } of read.problems ?? []) {
    context.addIssue({ code: 'custom', path: [...path], message });
  }
  return read.pages ? { file, pages: read.pages } : z.NEVER;
});

export const StatusFeed = z
  .object({
    baseUrl: env('STATUS_BASE_URL', httpUrl('/api/v2').optional(), {
      description:
        'The Statuspage v2 feed, ending in `/api/v2`: the one page, slug `default`. Required unless `STATUS_PAGES_FILE` lists the pages (setting both is an error); `npm start` starts a simulator when both are unset.',
    }),
    pages: env('STATUS_PAGES_FILE', pagesFile, {
      unset: 'one page from `STATUS_BASE_URL`, slug `default`',
      description:
        "A YAML or JSON file listing the status pages the graph serves, in order (the first is the default): `pages: [{ slug, baseUrl, provider?, name?, tags?: [tag], chains?: [{ chainId, components: [component ids] }], versionPattern?, webhookToken?, pollIntervalMs? }]`; a tag is written like a slug, at most 20 a page. `provider` is the feed's format, `statuspage-v2` (the default; its `baseUrl` ends in `/api/v2`) or another folder of `src/providers/`. See README.md. A page costs nothing until it is asked for. `webhookToken` (at least 32 URL-safe characters, random: `openssl rand -hex 32`) opens `POST /webhooks/statuspage/<slug>/<token>` for that page: its Statuspage webhook makes it refetch at once (docs/operations.md). `pollIntervalMs` (1000 to 3600000, a second to an hour) is how often the documents a subscription follows are read, instead of `STATUS_POLL_INTERVAL_MS`: at 60000, one upstream request a minute per document (a query's refetch meanwhile counts as the poll), where the 10 s TTL alone would cost six; below `STATUS_CACHE_TTL_MS` it is the TTL. Where the feed sends `ETag` or `Last-Modified`, a poll of an unchanged document is a 304: no body, nothing rebuilt. The file is read again when it changes and on SIGHUP: added pages are served, removed ones let go and their subscriptions ended; a file with problems keeps the pages as they were, and each problem is logged (docs/operations.md). At most 4 MiB (10,000 pages of 400 bytes); write a long list as JSON, which parses at a fraction of the heap and time YAML takes (about 100 bytes of heap per byte).",
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
    overviewDeadlineMs: env('STATUS_OVERVIEW_DEADLINE_MS', wholeNumber(1), {
      default: '1000',
      description:
        "How long a list or an overview of pages (`statusPages`, `pages`, `statusOverview`, `incidents`) waits for any one page's feed: a page that has not answered by then is shown with its last known state (`reachable: false`, `stale: true`), or, never having answered, left out with an error naming it (`StatusOverview.unreachablePages` lists both). Its fetch goes on in the background, for the next reader: a page that never answers costs its `STATUS_TIMEOUT_MS` there, never in a client's answer.",
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
    const only: StatusPageEntry = { slug: DEFAULT_PAGE_SLUG, baseUrl, chains: [], tags: [] };
    return {
      ...feed,
      pages: pages?.pages ?? [only],
      /** The file the pages were read from, read again when it changes; none for one page. */
      pagesFile: pages?.file,
      pollIntervalMs: pollIntervalMs ?? Math.max(feed.cacheTtlMs, MIN_DEFAULT_POLL_MS),
      maxBytes: maxBytes ?? Math.floor(getHeapStatistics().heap_size_limit * PAGES_HEAP_SHARE),
      idleMs: idleMs ?? Math.max(feed.maxStaleMs, feed.cacheTtlMs),
    };
  })
  .meta({ title: 'Status feed' });
