import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import type { LevelWithSilent } from 'pino';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { DEFAULT_PAGE_SLUG } from './core/status/model.js';

/**
 * The heap an idle subscriber holds, at most, as `npm run bench:fanout` measured it for
 * subscribers sharing a subscription (docs/performance.md): what `MAX_SUBSCRIPTIONS` is derived from.
 */
const SUBSCRIBER_HEAP_BYTES = 16 * 1024;

/*
 * The gateway's whole configuration: every environment variable once, with its default and its
 * description beside it. `loadConfig` parses them together and shapes them for the code that uses
 * them; docs/configuration.md is printed from `CONFIG_VARIABLES` (`npm run docs:config`), and the
 * test suite fails when it is stale.
 */

/** One environment variable: how its text is read, and what to tell an operator about it. */
export interface ConfigVariable<Value = unknown> {
  readonly section: ConfigSection;
  readonly description: string;
  /** The value used when the variable is unset or empty, written as an operator would set it. */
  readonly default?: string;
  /** What happens when it is unset and there is no `default` (a default that depends on others). */
  readonly unset?: string;
  readonly schema: z.ZodType<Value, string>;
}

export type ConfigSection =
  | 'Server'
  | 'Status feed'
  | 'Verification service'
  | 'Upstreams'
  | 'Limits'
  | 'Subscriptions'
  | 'Browsers'
  | 'Persisted documents'
  | 'Observability'
  | 'Replicas';

const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d+$/, { error: 'must be a whole number' })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: `must be at least ${min}` })
        .max(max, { error: `must be at most ${max}` }),
    );

const flag = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1');

const oneOf = <const Values extends readonly [string, ...string[]]>(values: Values) =>
  z.enum(values, { error: `must be one of ${values.join(', ')}` });

const httpUrl = (suffix?: string) =>
  z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .refine(
      (url) =>
        suffix === undefined ||
        !URL.canParse(url) ||
        new URL(url).pathname.replace(/\/+$/, '').endsWith(suffix),
      { error: `must end in ${suffix}` },
    )
    .transform((url) => url.replace(/\/+$/, ''));

const originList = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
  )
  .pipe(
    z.array(
      z.url({ protocol: /^https?$/, error: 'must be a comma-separated list of http(s) origins' }),
    ),
  );

const headerNames = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  )
  .pipe(
    z.array(
      z.string().regex(/^[!#$%&'*+.^_`|~0-9a-z-]+$/, {
        error: 'must be a comma-separated list of HTTP header names',
      }),
    ),
  );

const redisUrl = z.url({
  protocol: /^rediss?$/,
  error: 'must be a redis:// or rediss:// URL',
});

/** `key=value` pairs separated by commas, values URL-encoded (the OTLP exporter's headers). */
const keyValueList = z.string().transform((value, context) => {
  const pairs: Record<string, string> = {};
  for (const item of value.split(',')) {
    if (item.trim() === '') continue;
    const at = item.indexOf('=');
    const key = at > 0 ? item.slice(0, at).trim() : '';
    if (key === '') {
      context.addIssue({ code: 'custom', message: 'must be a list of key=value pairs' });
      return z.NEVER;
    }
    try {
      pairs[key] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      context.addIssue({ code: 'custom', message: 'has a value that is not URL-encoded' });
      return z.NEVER;
    }
  }
  return pairs;
});

const ratio = z
  .string()
  .regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, { error: 'must be a number from 0 to 1' })
  .transform(Number);

/** CORS request headers allowed by default: what GraphQL clients, tracing and routers send. */
const DEFAULT_CORS_ALLOWED_HEADERS = [
  'content-type',
  'accept',
  'authorization',
  'x-request-id',
  'traceparent',
  'tracestate',
  'baggage',
  'apollographql-client-name',
  'apollographql-client-version',
  'apollo-require-preflight',
  'x-apollo-operation-name',
  'graphql-client-name',
  'graphql-client-version',
];

const variable = <Value>(definition: ConfigVariable<Value>) => definition;

/** Every variable the gateway reads, in the order docs/configuration.md lists them. */
export const CONFIG_VARIABLES = {
  PORT: variable({
    section: 'Server',
    description: 'Port to listen on (`0` picks a free one).',
    default: '4000',
    schema: wholeNumber(0, 65_535),
  }),
  HOST: variable({
    section: 'Server',
    description: 'Address to listen on.',
    unset: 'all interfaces',
    schema: z.string(),
  }),
  NODE_ENV: variable({
    section: 'Server',
    description:
      '`production` requires both upstream URLs, masks internal error details, turns GraphiQL and introspection off and marks the session cookie `Secure` (each can be turned back on).',
    default: 'development',
    schema: oneOf(['development', 'production', 'test']),
  }),
  LOG_LEVEL: variable({
    section: 'Server',
    description: 'Least severe log level written to stdout.',
    default: 'info',
    schema: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  }),
  LOG_REQUESTS: variable({
    section: 'Server',
    description:
      'Which requests get a `request` log line: `sampled`, every one but response-cache hits past `LOG_SAMPLED_HITS_PER_SECOND` in a second, which one line a second counts (`request lines skipped`); `all`, every one; `uncached`, every one but response-cache hits; `errors`, only answers with an error or a verification outcome. Errors are logged whatever the setting, and metrics count every request; healthcheck probes that pass (`/health`, `/readiness`) are logged at debug only. At tens of thousands of hits a second, a line each is megabytes of log a second; see docs/operations.md.',
    default: 'sampled',
    schema: oneOf(['sampled', 'all', 'uncached', 'errors']),
  }),
  LOG_SAMPLED_HITS_PER_SECOND: variable({
    section: 'Server',
    description:
      'With `LOG_REQUESTS=sampled`, the response-cache hits a second that get their own `request` line; the rest are counted in one line a second.',
    default: '100',
    schema: wholeNumber(1, 1_000_000),
  }),
  TRUSTED_PROXIES: variable({
    section: 'Server',
    description:
      'Proxies in front of the gateway that append to `X-Forwarded-For`; the client of a request is the address the outermost one saw. `0`: the socket peer, and the header is ignored (a client could write anything in it).',
    default: '0',
    schema: wholeNumber(0, 10),
  }),
  SHUTDOWN_GRACE_MS: variable({
    section: 'Server',
    description:
      'On SIGTERM, how long in-flight requests get to finish (answers carry `Connection: close` meanwhile). Cover the longest operation: an APIv2 `verifyContract` waits up to `VERIFY_WAIT_MS` plus a poll.',
    default: '30000',
    schema: wholeNumber(0),
  }),
  HTTP_HEADERS_TIMEOUT_MS: variable({
    section: 'Server',
    description: 'Time a client gets to send its request headers.',
    default: '10000',
    schema: wholeNumber(1),
  }),
  HTTP_REQUEST_TIMEOUT_MS: variable({
    section: 'Server',
    description:
      'Time a client gets to send its whole request, body included (a slow body gets 408).',
    default: '30000',
    schema: wholeNumber(1),
  }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: variable({
    section: 'Server',
    description: 'How long an idle keep-alive connection is kept open.',
    default: '5000',
    schema: wholeNumber(1),
  }),
  HTTP_SOCKET_IDLE_TIMEOUT_MS: variable({
    section: 'Server',
    description:
      'A connection with nothing read or written for this long is closed: a client that stops reading its answer cannot hold the socket.',
    default: '60000',
    schema: wholeNumber(1),
  }),
  HTTP_MAX_CONNECTIONS: variable({
    section: 'Server',
    description: 'Open connections at most; further ones are refused until some close.',
    default: '1000',
    schema: wholeNumber(1),
  }),
  STATUS_BASE_URL: variable({
    section: 'Status feed',
    description:
      'The Statuspage v2 feed, ending in `/api/v2`: the one page, slug `default`. Required unless `STATUS_PAGES_FILE` lists the pages (setting both is an error); `npm start` starts a simulator when both are unset.',
    schema: httpUrl('/api/v2'),
  }),
  STATUS_PAGES_FILE: variable({
    section: 'Status feed',
    description:
      'A YAML or JSON file listing the status pages the graph serves, in order (the first is the default): `pages: [{ slug, baseUrl, name?, chains?: [{ chainId, components: [component ids] }], versionPattern? }]`. See README.md. A page costs nothing until it is asked for.',
    unset: 'one page from `STATUS_BASE_URL`, slug `default`',
    schema: z.string().min(1),
  }),
  STATUS_CACHE_TTL_MS: variable({
    section: 'Status feed',
    description: 'How long one fetch of a feed document serves every request.',
    default: '10000',
    schema: wholeNumber(0),
  }),
  STATUS_MAX_STALE_MS: variable({
    section: 'Status feed',
    description:
      'How long after its fetch a document stands in while the feed fails (`Page.stale` is then true).',
    default: '300000',
    schema: wholeNumber(0),
  }),
  STATUS_POLL_INTERVAL_MS: variable({
    section: 'Status feed',
    description:
      'While anyone subscribes, how often each feed document the subscriptions need is read to find changes. Reads go through the same cache as queries, so polling costs no upstream request beyond one per `STATUS_CACHE_TTL_MS`; a change reaches subscribers within the longer of the two.',
    unset: '`STATUS_CACHE_TTL_MS` (at least 100)',
    schema: wholeNumber(10),
  }),
  STATUS_TIMEOUT_MS: variable({
    section: 'Status feed',
    description: '`UPSTREAM_TIMEOUT_MS` for the status feed alone.',
    unset: '`UPSTREAM_TIMEOUT_MS`',
    schema: wholeNumber(1),
  }),
  VERIFY_BASE_URL: variable({
    section: 'Verification service',
    description:
      'The contract verification service (a Sourcify server). Required by the gateway; `npm start` starts a simulator for it when it is unset.',
    schema: httpUrl(),
  }),
  VERIFY_API: variable({
    section: 'Verification service',
    description:
      "The service's API: `auto` asks the server which it speaks (once, remembered, asked again after a failure that suggests the server changed) and prefers APIv2; `session` forces Sourcify's session API (servers before 3.10), `v2` forces APIv2 (today's Sourcify). The source mutations, `verificationJobChanged` and the bulk lookups need APIv2.",
    default: 'auto',
    schema: oneOf(['auto', 'session', 'v2']),
  }),
  VERIFY_TIMEOUT_MS: variable({
    section: 'Verification service',
    description:
      '`UPSTREAM_TIMEOUT_MS` for the verification service alone; verifying can take a while.',
    unset: '`UPSTREAM_TIMEOUT_MS`',
    schema: wholeNumber(1),
  }),
  VERIFY_WAIT_MS: variable({
    section: 'Verification service',
    description:
      'With APIv2, how long `verifyContract` waits for the job before answering `VerificationPending`.',
    default: '20000',
    schema: wholeNumber(0),
  }),
  VERIFY_POLL_INTERVAL_MS: variable({
    section: 'Verification service',
    description:
      'With APIv2, the first pause between polls of a job; each pause is 1.5 times the last, up to 2 s.',
    default: '250',
    schema: wholeNumber(1),
  }),
  VERIFY_WATCH_INTERVAL_MS: variable({
    section: 'Verification service',
    description:
      'How often a job that `verificationJobChanged` subscribers follow is polled: once per interval whoever watches it (all subscribers of one job on a replica share each poll, and the replicas share it through Redis when `REDIS_URL` is set).',
    default: '1000',
    schema: wholeNumber(100, 600_000),
  }),
  VERIFY_JOB_STALE_MS: variable({
    section: 'Verification service',
    description:
      'A job still running this long after it started is reported `stale` (`VerificationPending.stale`, with what the user can do in its `message`): Sourcify has had jobs stuck "running" for hours, which it cannot cancel and which block resubmitting the contract.',
    default: '600000',
    schema: wholeNumber(1),
  }),
  VERIFY_MAX_SOURCE_BYTES: variable({
    section: 'Verification service',
    description:
      'Largest source input `verifyContractFromSource` (its `stdJsonInput`) and `verifyContractFromMetadata` (its `metadata` and `sources` together) accept, in bytes of JSON; larger is refused with `INPUT_TOO_LARGE` before anything is sent. A request carrying one of these mutations may be this much larger than `MAX_BODY_BYTES` (send the input as a variable, over HTTP POST); every other request keeps `MAX_BODY_BYTES`.',
    default: '8388608',
    schema: wholeNumber(1024, 64 * 1024 * 1024),
  }),
  VERIFY_MAX_CONCURRENT_UPLOADS: variable({
    section: 'Verification service',
    description:
      'Request bodies above `MAX_BODY_BYTES` (source verifications) read at once on this replica; more are refused with 503 `TOO_MANY_UPLOADS` until one is done, so that large bodies hold at most this many times `VERIFY_MAX_SOURCE_BYTES` of memory.',
    default: '4',
    schema: wholeNumber(1, 1_000),
  }),
  VERIFY_LOOKUP_CONCURRENCY: variable({
    section: 'Verification service',
    description:
      'Contract lookups one operation has in flight to the service at once (`contracts` with up to 100 addresses, `_entities`); the rest wait their turn.',
    default: '8',
    schema: wholeNumber(1, 100),
  }),
  VERIFY_LOOKUP_TTL_MS: variable({
    section: 'Verification service',
    description:
      "How long a contract lookup is served from memory; after that it is asked again with the service's ETag (`If-None-Match`), and a `304 Not Modified` renews it without a body.",
    default: '30000',
    schema: wholeNumber(0),
  }),
  VERIFY_LOOKUP_CACHE_BYTES: variable({
    section: 'Verification service',
    description:
      'Bytes of contract lookups kept in memory (each counted as its answer, its key and 512 bytes), least recently used dropped first.',
    default: '8388608',
    schema: wholeNumber(0),
  }),
  VERIFY_CHAINS_TTL_MS: variable({
    section: 'Verification service',
    description:
      "How long the service's chain list (`supportedChains`) is trusted before it is fetched again.",
    default: '3600000',
    schema: wholeNumber(0),
  }),
  VERIFY_RATE_LIMIT: variable({
    section: 'Verification service',
    description:
      "Verifications (`verifyContract`, `verifyContractFromSource`, `verifyContractFromMetadata`, counted together) one client may start per `VERIFY_RATE_WINDOW_MS`; more answer `RateLimitedError` with `retryAfterSeconds`. The service limits by the gateway's address, so this keeps one client from spending every user's quota.",
    default: '10',
    schema: wholeNumber(1),
  }),
  VERIFY_RATE_WINDOW_MS: variable({
    section: 'Verification service',
    description: 'The window `VERIFY_RATE_LIMIT` counts in.',
    default: '60000',
    schema: wholeNumber(1),
  }),
  SESSION_COOKIE_SECURE: variable({
    section: 'Verification service',
    description: 'Mark the `verify_session` cookie `Secure`, so browsers send it over HTTPS only.',
    unset: 'on in production',
    schema: flag,
  }),
  UPSTREAM_TIMEOUT_MS: variable({
    section: 'Upstreams',
    description: 'Time allowed per upstream attempt, and again for reading its body.',
    default: '5000',
    schema: wholeNumber(1),
  }),
  UPSTREAM_RETRIES: variable({
    section: 'Upstreams',
    description:
      'Retries of an upstream GET after a network error or a 5xx. POSTs are never retried.',
    default: '2',
    schema: wholeNumber(0),
  }),
  UPSTREAM_RETRY_DELAY_MS: variable({
    section: 'Upstreams',
    description: 'Delay before the first retry; each further retry doubles it, up to 2 s.',
    default: '300',
    schema: wholeNumber(0),
  }),
  UPSTREAM_MAX_CONCURRENT_REQUESTS: variable({
    section: 'Upstreams',
    description:
      'Requests in flight to one upstream at most; more wait their turn for up to the upstream timeout, then fail with `UPSTREAM_UNAVAILABLE`.',
    default: '32',
    schema: wholeNumber(1),
  }),
  CIRCUIT_FAILURE_THRESHOLD: variable({
    section: 'Upstreams',
    description: "Consecutive failures (after retries) that open an upstream's circuit.",
    default: '5',
    schema: wholeNumber(1),
  }),
  CIRCUIT_COOLDOWN_MS: variable({
    section: 'Upstreams',
    description: 'How long an open circuit fails fast before one probe goes through.',
    default: '30000',
    schema: wholeNumber(0),
  }),
  MAX_BODY_BYTES: variable({
    section: 'Limits',
    description: 'Largest request body; larger gets 413 (declared or streamed).',
    default: '262144',
    schema: wholeNumber(1),
  }),
  MAX_DEPTH: variable({
    section: 'Limits',
    description: 'Selection depth, fragments flattened (the page tree needs 5).',
    default: '12',
    schema: wholeNumber(1),
  }),
  MAX_ALIASES: variable({
    section: 'Limits',
    description: 'Aliases per operation.',
    default: '30',
    schema: wholeNumber(0),
  }),
  MAX_COST: variable({
    section: 'Limits',
    description: 'Cost: 2 per object, 1 per scalar, ×1.5 per depth level.',
    default: '5000',
    schema: wholeNumber(1),
  }),
  MAX_TOKENS: variable({
    section: 'Limits',
    description: 'Tokens in the document, counted while parsing.',
    default: '2000',
    schema: wholeNumber(1),
  }),
  MAX_RESOLVED_FIELDS: variable({
    section: 'Limits',
    description:
      'Fields one operation may resolve, every list item counted: bounds what nested lists multiply to. The page tree resolves 774 on a 66-component page and 4,651 on a 500-component one.',
    default: '20000',
    schema: wholeNumber(1),
  }),
  MAX_ANSWER_BYTES: variable({
    section: 'Limits',
    description:
      'Characters of text one answer may carry (string fields added up); past it the operation answers one error and no data. The whole page tree of a 500-component page is a 100 KB answer.',
    default: '5000000',
    schema: wholeNumber(1),
  }),
  MAX_EXECUTION_MS: variable({
    section: 'Limits',
    description:
      'Time one operation may spend executing, checked as each field starts: past it the operation answers one error and no data. It must exceed `VERIFY_WAIT_MS`, which a `verifyContract` may wait.',
    default: '30000',
    schema: wholeNumber(1),
  }),
  MAX_ENTITY_REPRESENTATIONS: variable({
    section: 'Limits',
    description:
      'Representations one `_entities` call may resolve; more is refused before any upstream is asked.',
    default: '200',
    schema: wholeNumber(1),
  }),
  MAX_DIRECTIVES: variable({
    section: 'Limits',
    description: 'Directives per operation.',
    default: '20',
    schema: wholeNumber(0),
  }),
  MAX_SUBSCRIPTIONS: variable({
    section: 'Subscriptions',
    description:
      'Subscriptions open at once on this replica, over SSE and WebSocket together; more are refused with `TOO_MANY_SUBSCRIPTIONS`. An SSE subscriber also holds one of `HTTP_MAX_CONNECTIONS`, and the process one open file per connection (`ulimit -n`).',
    unset:
      "as many as fit in the heap `SUBSCRIPTION_HEAP_LIMIT` leaves them: node's heap limit (`--max-old-space-size`) times `SUBSCRIPTION_HEAP_LIMIT`, over 16 KiB, the most an idle subscriber of a shared subscription was measured to hold (`npm run bench:fanout`, docs/performance.md); 13,440 under the Dockerfile's flags (a 280 MiB heap limit)",
    schema: wholeNumber(0),
  }),
  MAX_SSE_SUBSCRIPTIONS: variable({
    section: 'Subscriptions',
    description:
      'SSE subscriptions open at once on this replica, each holding one of `HTTP_MAX_CONNECTIONS`; more are refused with `TOO_MANY_SUBSCRIPTIONS`. It must stay below `HTTP_MAX_CONNECTIONS`, so that a crowd on SSE leaves HTTP (`/health`, `/readiness`, queries) connections of its own; with WebSockets, keep `MAX_SSE_SUBSCRIPTIONS` plus `MAX_WEBSOCKETS` below it too.',
    unset: 'three quarters of `HTTP_MAX_CONNECTIONS`',
    schema: wholeNumber(1),
  }),
  MAX_SUBSCRIPTIONS_PER_CONNECTION: variable({
    section: 'Subscriptions',
    description:
      'Operations one WebSocket connection may run at once, subscriptions and queries together; more are refused with `TOO_MANY_SUBSCRIPTIONS` (an SSE request is one subscription).',
    default: '20',
    schema: wholeNumber(1),
  }),
  MAX_SUBSCRIPTIONS_PER_CLIENT: variable({
    section: 'Subscriptions',
    description:
      'Subscriptions one client (its address, as `TRUSTED_PROXIES` finds it) may hold open at once, over SSE and WebSocket together; more are refused with `TOO_MANY_SUBSCRIPTIONS`. Behind a proxy, set `TRUSTED_PROXIES`, or every client counts as the proxy.',
    default: '100',
    schema: wholeNumber(1),
  }),
  SUBSCRIPTION_HEAP_LIMIT: variable({
    section: 'Subscriptions',
    description:
      "Share of node's heap limit (`--max-old-space-size`) in use above which new subscriptions are refused with `TOO_MANY_SUBSCRIPTIONS`, whatever `MAX_SUBSCRIPTIONS` allows: an idle subscriber sharing its subscription with others who sent the same request holds about 9 KB over SSE and 5 KB over graphql-ws, one alone about 40 KB, and more while events are sent. Garbage not yet collected counts as in use.",
    default: '0.75',
    schema: ratio,
  }),
  SUBSCRIPTION_KEEP_ALIVE_MS: variable({
    section: 'Subscriptions',
    description:
      "How often a WebSocket is pinged; one that does not answer before the next ping is closed. SSE streams get a comment line every 12 s (Yoga's).",
    default: '12000',
    schema: wholeNumber(100),
  }),
  SUBSCRIPTION_BACKLOG: variable({
    section: 'Subscriptions',
    description:
      'Events one subscription may have waiting for its client; a client that falls further behind gets `SLOW_SUBSCRIBER` and its subscription ends. Whole-page events replace each other and count once.',
    default: '100',
    schema: wholeNumber(1),
  }),
  SUBSCRIPTION_MAX_BUFFERED_BYTES: variable({
    section: 'Subscriptions',
    description:
      "Bytes one SSE subscriber may leave unread; past them it is sent `SLOW_SUBSCRIBER` and its stream ends. Subscribers of the same operation are written the same event buffers, so a crowd that reads slowly holds each event's bytes once, not once each.",
    default: '1048576',
    schema: wholeNumber(1024),
  }),
  MAX_WEBSOCKETS: variable({
    section: 'Subscriptions',
    description:
      'WebSockets open at once on this replica; more are refused with 503 `TOO_MANY_WEBSOCKETS`. It must stay below `HTTP_MAX_CONNECTIONS`, so that HTTP (`/health`, `/readiness`, queries) keeps connections however many sockets are open.',
    unset: 'three quarters of `HTTP_MAX_CONNECTIONS`',
    schema: wholeNumber(1),
  }),
  MAX_WEBSOCKETS_PER_CLIENT: variable({
    section: 'Subscriptions',
    description:
      'WebSockets one client (its address, as `TRUSTED_PROXIES` defines it) may hold open at once; more are refused with 429 `TOO_MANY_WEBSOCKETS`. One socket carries many operations.',
    default: '32',
    schema: wholeNumber(1),
  }),
  WEBSOCKET_IDLE_TIMEOUT_MS: variable({
    section: 'Subscriptions',
    description:
      'A WebSocket running no operation for this long is closed with 1000 (checked at each keep-alive ping; pings do not count as operations). A socket that sends no `connection_init` within 3 s is closed with 4408.',
    default: '300000',
    schema: wholeNumber(1),
  }),
  WEBSOCKET_MAX_BUFFERED_BYTES: variable({
    section: 'Subscriptions',
    description:
      "Bytes one WebSocket may have waiting to be sent to its client (each message counted with 512 bytes of overhead): past 64 KiB its reads pause until its writes drain; past this, a socket that completes no write for 2 s is closed with 1008. A burst the gateway queues itself (many subscriptions' first events at once) still reaches a client that reads.",
    default: '1048576',
    schema: wholeNumber(1024),
  }),
  WEBSOCKET_MAX_TOTAL_BUFFERED_BYTES: variable({
    section: 'Subscriptions',
    description:
      'Bytes all WebSockets together may have waiting to be sent to their clients; a socket whose next message would go past it is closed with 1008, as one that does not read. `WEBSOCKET_MAX_BUFFERED_BYTES` times `MAX_WEBSOCKETS` is far more than the heap holds: this bounds a crowd of slow readers.',
    unset: "a quarter of node's heap limit (`--max-old-space-size`)",
    schema: wholeNumber(1024),
  }),
  GRAPHIQL: variable({
    section: 'Browsers',
    description: 'Serve GraphiQL to browsers at `/graphql`.',
    unset: 'on outside production',
    schema: flag,
  }),
  STATUS_BOARD: variable({
    section: 'Browsers',
    description:
      'Serve the live status board at `/status`: a small page that follows the `statusPageChanged` subscription.',
    default: 'true',
    schema: flag,
  }),
  INTROSPECTION: variable({
    section: 'Browsers',
    description: 'Answer introspection; when off, "did you mean" suggestions are off too.',
    unset: 'on outside production',
    schema: flag,
  }),
  CORS_ORIGINS: variable({
    section: 'Browsers',
    description:
      'Comma-separated origins allowed to call the gateway from a browser, with credentials. Empty: same-origin only.',
    default: '',
    schema: originList,
  }),
  CORS_ALLOWED_HEADERS: variable({
    section: 'Browsers',
    description:
      'Comma-separated request headers a cross-origin caller may send (answered to CORS preflights).',
    default: DEFAULT_CORS_ALLOWED_HEADERS.join(','),
    schema: headerNames,
  }),
  PERSISTED_DOCUMENTS_FILE: variable({
    section: 'Persisted documents',
    description:
      'The persisted documents manifest: a JSON object from id (`sha256:<hex of the text>`) to document, which clients name by `documentId` (examples/typed-client generates it). Read once at start-up.',
    unset: "`persisted-documents.json` beside the gateway's package.json",
    schema: z.string(),
  }),
  PERSISTED_DOCUMENTS_ONLY: variable({
    section: 'Persisted documents',
    description:
      "Run only the manifest's documents; any other operation gets `PERSISTED_DOCUMENT_REQUIRED`. Off by default, in production too: a federation router sends the operations it plans (`_entities`, `_service`), and GraphiQL and third-party clients send text. Turn it on for a gateway only your own clients call.",
    default: 'false',
    schema: flag,
  }),
  METRICS_PORT: variable({
    section: 'Observability',
    description:
      'Serve `/metrics` on this port alone (bound to `HOST`), off the API port, so that only the scraper reaches it. Set it to the API port or leave it unset to serve `/metrics` beside `/graphql`.',
    unset: '`/metrics` on `PORT`',
    schema: wholeNumber(0, 65_535),
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: variable({
    section: 'Observability',
    description:
      'OTLP/HTTP collector base URL; traces are sent to `<url>/v1/traces`. Setting it (or the next variable) turns tracing on.',
    unset: 'no tracing',
    schema: httpUrl(),
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: variable({
    section: 'Observability',
    description: 'Full OTLP/HTTP URL for traces, used as written; wins over the base URL.',
    unset: '`OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`',
    schema: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  }),
  OTEL_EXPORTER_OTLP_HEADERS: variable({
    section: 'Observability',
    description:
      'Headers sent with each export, as `key=value` pairs separated by commas (values URL-encoded). They often carry a token: never logged.',
    default: '',
    schema: keyValueList,
  }),
  OTEL_SERVICE_NAME: variable({
    section: 'Observability',
    description: '`service.name` of every span.',
    default: 'ledger-status-gateway',
    schema: z.string(),
  }),
  OTEL_TRACES_SAMPLER: variable({
    section: 'Observability',
    description:
      "Which traces are recorded: `parentbased_always_on` follows the caller's `traceparent` decision and samples the rest; `traceidratio` variants keep `OTEL_TRACES_SAMPLER_ARG` of them.",
    default: 'parentbased_always_on',
    schema: oneOf([
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ]),
  }),
  OTEL_TRACES_SAMPLER_ARG: variable({
    section: 'Observability',
    description: 'The ratio of traces the `traceidratio` samplers keep.',
    default: '1',
    schema: ratio,
  }),
  OTEL_BSP_SCHEDULE_DELAY: variable({
    section: 'Observability',
    description:
      'Milliseconds between two exports of finished spans (at most 2,048 wait; more are dropped, never held in memory).',
    default: '5000',
    schema: wholeNumber(1, 60_000),
  }),
  OTEL_SDK_DISABLED: variable({
    section: 'Observability',
    description: 'Turn tracing off even when an exporter endpoint is set.',
    default: 'false',
    schema: flag,
  }),
  REDIS_URL: variable({
    section: 'Replicas',
    description:
      "Redis shared by the gateway's replicas (`redis://[user:password@]host[:port][/db]`, `rediss://` for TLS): they share status feed snapshots (one upstream request per TTL across them all), change events, `verifyContract` allowances and the response cache's validity through it. While it is unreachable each replica works alone. The password is never logged.",
    unset: 'each replica alone, in memory',
    schema: redisUrl,
  }),
  REDIS_KEY_PREFIX: variable({
    section: 'Replicas',
    description:
      'Prefix of every Redis key and channel the gateway uses, so that several gateways (or environments) can share one Redis. Replicas of one gateway must use the same.',
    default: 'ledger-status-gateway:',
    schema: z.string().regex(/^[\w.:-]{1,64}$/, {
      error: 'must be 1 to 64 letters, digits, `_`, `.`, `:` or `-`',
    }),
  }),
  REDIS_COMMAND_TIMEOUT_MS: variable({
    section: 'Replicas',
    description:
      'Time one Redis command may take. Past it the replica works alone until Redis answers again, so that a hung Redis never holds a request longer than this.',
    default: '500',
    schema: wholeNumber(1),
  }),
} as const satisfies Record<string, ConfigVariable>;

export type ConfigVariableName = keyof typeof CONFIG_VARIABLES;

/** What an upstream client needs to know about timing and failure. */
export interface UpstreamPolicy {
  readonly timeoutMs: number;
  readonly maxConcurrentRequests: number;
  readonly retries: number;
  readonly retryDelayMs: number;
  readonly circuitFailureThreshold: number;
  readonly circuitCooldownMs: number;
}

/** Bounds on operations, checked before they run, and whether introspection is served. */
export interface QueryLimits {
  readonly maxDepth: number;
  readonly maxAliases: number;
  readonly maxCost: number;
  readonly maxTokens: number;
  readonly maxDirectives: number;
  readonly introspection: boolean;
}

/** How spans are sampled, as the OTEL_TRACES_SAMPLER variables say. */
export interface TracingSampler {
  /** Whether a caller's `traceparent` decides for its trace. */
  readonly parentBased: boolean;
  /** Share of the traces the gateway starts that are recorded: 1 always, 0 never. */
  readonly ratio: number;
}

/** OpenTelemetry tracing, exported over OTLP/HTTP. */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL, e.g. `http://collector:4318/v1/traces`. */
  readonly tracesUrl: string;
  /** Sent with every export; may hold a token, so never logged. */
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
  readonly sampler: TracingSampler;
  /** How long finished spans wait to be exported together. */
  readonly exportDelayMs: number;
}

/** Where the replicas share state. */
export interface RedisConfig {
  /** As configured: it may carry a password. */
  readonly url: string;
  /** `url` without its password, for logs and reports. */
  readonly loggedUrl: string;
  /** Prefix of every key and channel. */
  readonly keyPrefix: string;
  readonly commandTimeoutMs: number;
}

/** One status page of `STATUS_PAGES_FILE` (or `STATUS_BASE_URL`'s). */
export interface StatusPageConfig {
  /** How clients name it (`statusPage(slug:)`), and what its Redis keys and metrics carry. */
  readonly slug: string;
  /** Its Statuspage v2 feed, ending in `/api/v2`. */
  readonly baseUrl: string;
  /** What `Page.name` says instead of the name the feed gives itself. */
  readonly name: string | undefined;
  /** The chains the page stands for, each by some of its components. */
  readonly chains: readonly { readonly chainId: string; readonly components: readonly string[] }[];
  /** Cuts a component's software version out of its name: its first capture group. */
  readonly versionPattern: RegExp | undefined;
}

/** The configuration, shaped for the code that consumes it. */
export interface Config {
  readonly server: {
    readonly port: number;
    readonly host: string | undefined;
    readonly shutdownGraceMs: number;
    readonly trustedProxies: number;
  };
  readonly http: {
    readonly headersTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
    readonly socketIdleTimeoutMs: number;
    readonly maxConnections: number;
  };
  readonly environment: 'development' | 'production' | 'test';
  readonly logLevel: LevelWithSilent;
  /** Which requests get a `request` log line (errors always do). */
  readonly logRequests: {
    readonly mode: 'sampled' | 'all' | 'uncached' | 'errors';
    /** With `sampled`: hits a second that get their own line. */
    readonly sampledHitsPerSecond: number;
  };
  readonly statusFeed: {
    /** The pages, in configuration order: the first is the default. Never empty. */
    readonly pages: readonly StatusPageConfig[];
    readonly cacheTtlMs: number;
    readonly maxStaleMs: number;
    /** How often a document is read while subscriptions need it. */
    readonly pollIntervalMs: number;
    readonly upstream: UpstreamPolicy;
  };
  readonly verification: {
    readonly baseUrl: string;
    /** `auto` finds out which API the server speaks. */
    readonly api: 'auto' | 'session' | 'v2';
    readonly waitMs: number;
    /** How often a watched job is polled (`verificationJobChanged`). */
    readonly watchIntervalMs: number;
    /** A job running longer than this is `stale`. */
    readonly jobStaleMs: number;
    /** Largest source input of the source mutations, in bytes of JSON. */
    readonly maxSourceBytes: number;
    /** Request bodies above `limits.maxBodyBytes` read at once. */
    readonly maxConcurrentUploads: number;
    /** Contract lookups one operation has in flight at once. */
    readonly lookupConcurrency: number;
    /** How long a contract lookup is served before it is revalidated. */
    readonly lookupTtlMs: number;
    /** Bytes of contract lookups kept in memory. */
    readonly lookupCacheBytes: number;
    readonly pollIntervalMs: number;
    readonly chainsTtlMs: number;
    readonly sessionCookieSecure: boolean;
    /** `verifyContract` calls per client per window. */
    readonly clientQuota: { readonly limit: number; readonly windowMs: number };
    readonly upstream: UpstreamPolicy;
  };
  readonly limits: QueryLimits & {
    readonly maxBodyBytes: number;
    readonly maxResolvedFields: number;
    readonly maxAnswerBytes: number;
    readonly maxExecutionMs: number;
    readonly maxEntityRepresentations: number;
  };
  readonly subscriptions: {
    /** Open at once on this replica, every transport together. */
    readonly maxTotal: number;
    /** SSE streams open at once: each holds an HTTP connection. */
    readonly maxSse: number;
    /** Open at once on one WebSocket connection. */
    readonly maxPerConnection: number;
    /** Open at once by one client address, every transport together. */
    readonly maxPerClient: number;
    /** Share of the heap limit in use above which new subscriptions are refused. */
    readonly maxHeapShare: number;
    /** WebSocket ping interval. */
    readonly keepAliveMs: number;
    /** Events one subscription may have waiting for its client. */
    readonly backlog: number;
    /** Bytes one SSE subscriber may leave unread. */
    readonly maxBufferedBytes: number;
  };
  /** What the WebSockets of this replica may hold. */
  readonly websockets: {
    /** Open at once; below `http.maxConnections`. */
    readonly maxTotal: number;
    /** Open at once from one client. */
    readonly maxPerClient: number;
    /** A socket running no operation this long is closed. */
    readonly idleTimeoutMs: number;
    /** Bytes one socket may have waiting to be sent. */
    readonly maxBufferedBytes: number;
    /** Bytes all sockets together may have waiting to be sent; unset: a quarter of the heap limit. */
    readonly maxTotalBufferedBytes: number | undefined;
  };
  readonly graphiql: boolean;
  /** Whether `/status` serves the live status board. */
  readonly statusBoard: boolean;
  /** Cross-origin callers; `undefined` when CORS is off (same-origin only). */
  readonly cors:
    | { readonly origins: readonly string[]; readonly allowedHeaders: readonly string[] }
    | undefined;
  /** Documents clients may name by id, and whether they are the only ones run. */
  readonly persistedDocuments: {
    /** The manifest's path; `undefined` for the one beside package.json. */
    readonly file: string | undefined;
    readonly only: boolean;
  };
  /** Where `/metrics` is served: its own port, or `undefined` for the API port. */
  readonly metricsPort: number | undefined;
  /** OpenTelemetry tracing; `undefined` when off. */
  readonly tracing: TracingConfig | undefined;
  /** The Redis the replicas share state through; `undefined`: each replica alone, in memory. */
  readonly redis: RedisConfig | undefined;
  /** Show internal error details to clients: development only. */
  readonly exposeErrorDetails: boolean;
}

/** The configuration is unusable; `problems` lists every reason, each naming its variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.problems = problems;
  }
}

type Values = {
  -readonly [Name in ConfigVariableName]: z.output<(typeof CONFIG_VARIABLES)[Name]['schema']>;
};

/** How often Yoga writes a keep-alive comment into an SSE stream (fixed by Yoga). */
const SSE_PING_MS = 12_000;

/**
 * Reads the configuration from the environment, once. Every problem is reported together, so an
 * operator fixes it in one go; empty values count as unset; variables it does not know are ignored.
 */
export function loadConfig(
  source: Readonly<Record<string, string | undefined>> = process.env,
): Config {
  const values: Partial<Values> = {};
  const problems: string[] = [];
  for (const [name, definition] of Object.entries(CONFIG_VARIABLES)) {
    const text = source[name]?.trim() || definition.default;
    if (text === undefined) continue;
    const parsed = (definition.schema as z.ZodType<unknown, string>).safeParse(text);
    if (parsed.success) (values as Record<string, unknown>)[name] = parsed.data;
    else problems.push(...parsed.error.issues.map((issue) => `${name} ${issue.message}`));
  }
  const pagesFile = values.STATUS_PAGES_FILE;
  let pages: StatusPageConfig[] | undefined;
  if (pagesFile !== undefined) {
    pages = readStatusPagesFile(pagesFile, problems);
    if (source.STATUS_BASE_URL?.trim()) {
      problems.push(
        'STATUS_BASE_URL and STATUS_PAGES_FILE are both set: list the page in the file, or unset the file for one page',
      );
    }
  }
  for (const name of ['STATUS_BASE_URL', 'VERIFY_BASE_URL'] as const) {
    if (name === 'STATUS_BASE_URL' && pagesFile !== undefined) continue;
    if (values[name] === undefined && !source[name]?.trim()) {
      problems.push(
        `${name} is required: the ${CONFIG_VARIABLES[name].section.toLowerCase()}'s URL (\`npm start\` simulates it outside production)`,
      );
    }
  }
  const { MAX_EXECUTION_MS: maxExecution, VERIFY_WAIT_MS: verifyWait } = values;
  if (maxExecution !== undefined && verifyWait !== undefined && maxExecution <= verifyWait) {
    problems.push(
      `MAX_EXECUTION_MS (${maxExecution}) must exceed VERIFY_WAIT_MS (${verifyWait}): a verifyContract may wait that long`,
    );
  }
  const { HTTP_SOCKET_IDLE_TIMEOUT_MS: idle, SUBSCRIPTION_KEEP_ALIVE_MS: keepAlive } = values;
  if (idle !== undefined && keepAlive !== undefined && idle <= Math.max(keepAlive, SSE_PING_MS)) {
    problems.push(
      `HTTP_SOCKET_IDLE_TIMEOUT_MS (${idle}) must exceed SUBSCRIPTION_KEEP_ALIVE_MS (${keepAlive}) and the 12000 ms between SSE keep-alive lines: idle subscriptions would be cut`,
    );
  }
  const { MAX_WEBSOCKETS: maxSockets, HTTP_MAX_CONNECTIONS: maxConnections } = values;
  if (maxSockets !== undefined && maxConnections !== undefined && maxSockets >= maxConnections) {
    problems.push(
      `MAX_WEBSOCKETS (${maxSockets}) must be below HTTP_MAX_CONNECTIONS (${maxConnections}): WebSockets would leave no connection for /health and HTTP`,
    );
  }
  const { MAX_SSE_SUBSCRIPTIONS: maxSse } = values;
  if (maxSse !== undefined && maxConnections !== undefined && maxSse >= maxConnections) {
    problems.push(
      `MAX_SSE_SUBSCRIPTIONS (${maxSse}) must be below HTTP_MAX_CONNECTIONS (${maxConnections}): SSE streams would leave no connection for /health and HTTP`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return shape(values as Values, pages);
}

/** Pages one `STATUS_PAGES_FILE` may list: each costs nothing until asked, but its entry is kept. */
const MAX_STATUS_PAGES = 10_000;

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

const StatusPageEntry = z.strictObject({
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
});

const StatusPagesFile = z
  .strictObject({ pages: z.array(StatusPageEntry).min(1).max(MAX_STATUS_PAGES) })
  .superRefine(({ pages }, context) => {
    const slugs = new Set<string>();
    const chains = new Map<string, string>();
    pages.forEach((page, i) => {
      if (slugs.has(page.slug)) {
        context.addIssue({ code: 'custom', path: ['pages', i, 'slug'], message: 'is a repeat' });
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

/** `STATUS_PAGES_FILE`'s pages, or `undefined` with every problem of the file in `problems`. */
function readStatusPagesFile(file: string, problems: string[]): StatusPageConfig[] | undefined {
  let content: unknown;
  try {
    content = parseYaml(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    problems.push(`STATUS_PAGES_FILE ${file} cannot be read: ${reason}`);
    return undefined;
  }
  const parsed = StatusPagesFile.safeParse(content);
  if (!parsed.success) {
    problems.push(
      ...parsed.error.issues.map((issue) =>
        [`STATUS_PAGES_FILE`, pathOf(issue.path), issue.message].filter(Boolean).join(' '),
      ),
    );
    return undefined;
  }
  return parsed.data.pages.map((page) => ({
    slug: page.slug,
    baseUrl: page.baseUrl,
    name: page.name,
    chains: page.chains,
    versionPattern: page.versionPattern,
  }));
}

/** A zod issue's path as an operator reads it: `pages[2].chains[0].chainId`. */
function pathOf(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`))
    .join('');
}

/** The poll interval when it follows a TTL of (nearly) zero: not a busy loop. */
const MIN_DEFAULT_POLL_MS = 100;

function shape(values: Values, pages: readonly StatusPageConfig[] | undefined): Config {
  const production = values.NODE_ENV === 'production';
  const upstream = (timeoutMs: number | undefined): UpstreamPolicy => ({
    timeoutMs: timeoutMs ?? values.UPSTREAM_TIMEOUT_MS,
    maxConcurrentRequests: values.UPSTREAM_MAX_CONCURRENT_REQUESTS,
    retries: values.UPSTREAM_RETRIES,
    retryDelayMs: values.UPSTREAM_RETRY_DELAY_MS,
    circuitFailureThreshold: values.CIRCUIT_FAILURE_THRESHOLD,
    circuitCooldownMs: values.CIRCUIT_COOLDOWN_MS,
  });
  return deepFreeze({
    server: {
      port: values.PORT,
      host: values.HOST,
      shutdownGraceMs: values.SHUTDOWN_GRACE_MS,
      trustedProxies: values.TRUSTED_PROXIES,
    },
    http: {
      headersTimeoutMs: values.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: values.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: values.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      socketIdleTimeoutMs: values.HTTP_SOCKET_IDLE_TIMEOUT_MS,
      maxConnections: values.HTTP_MAX_CONNECTIONS,
    },
    environment: values.NODE_ENV,
    logLevel: values.LOG_LEVEL,
    logRequests: {
      mode: values.LOG_REQUESTS,
      sampledHitsPerSecond: values.LOG_SAMPLED_HITS_PER_SECOND,
    },
    statusFeed: {
      pages: pages ?? [
        {
          slug: DEFAULT_PAGE_SLUG,
          baseUrl: values.STATUS_BASE_URL,
          name: undefined,
          chains: [],
          versionPattern: undefined,
        },
      ],
      cacheTtlMs: values.STATUS_CACHE_TTL_MS,
      maxStaleMs: values.STATUS_MAX_STALE_MS,
      pollIntervalMs:
        values.STATUS_POLL_INTERVAL_MS ?? Math.max(values.STATUS_CACHE_TTL_MS, MIN_DEFAULT_POLL_MS),
      upstream: upstream(values.STATUS_TIMEOUT_MS),
    },
    verification: {
      baseUrl: values.VERIFY_BASE_URL,
      api: values.VERIFY_API,
      waitMs: values.VERIFY_WAIT_MS,
      pollIntervalMs: values.VERIFY_POLL_INTERVAL_MS,
      watchIntervalMs: values.VERIFY_WATCH_INTERVAL_MS,
      jobStaleMs: values.VERIFY_JOB_STALE_MS,
      maxSourceBytes: values.VERIFY_MAX_SOURCE_BYTES,
      maxConcurrentUploads: values.VERIFY_MAX_CONCURRENT_UPLOADS,
      lookupConcurrency: values.VERIFY_LOOKUP_CONCURRENCY,
      lookupTtlMs: values.VERIFY_LOOKUP_TTL_MS,
      lookupCacheBytes: values.VERIFY_LOOKUP_CACHE_BYTES,
      chainsTtlMs: values.VERIFY_CHAINS_TTL_MS,
      sessionCookieSecure: values.SESSION_COOKIE_SECURE ?? production,
      clientQuota: { limit: values.VERIFY_RATE_LIMIT, windowMs: values.VERIFY_RATE_WINDOW_MS },
      upstream: upstream(values.VERIFY_TIMEOUT_MS),
    },
    limits: {
      maxBodyBytes: values.MAX_BODY_BYTES,
      maxDepth: values.MAX_DEPTH,
      maxAliases: values.MAX_ALIASES,
      maxCost: values.MAX_COST,
      maxTokens: values.MAX_TOKENS,
      maxDirectives: values.MAX_DIRECTIVES,
      maxResolvedFields: values.MAX_RESOLVED_FIELDS,
      maxAnswerBytes: values.MAX_ANSWER_BYTES,
      maxExecutionMs: values.MAX_EXECUTION_MS,
      maxEntityRepresentations: values.MAX_ENTITY_REPRESENTATIONS,
      introspection: values.INTROSPECTION ?? !production,
    },
    subscriptions: {
      maxTotal:
        values.MAX_SUBSCRIPTIONS ??
        Math.floor(
          (getHeapStatistics().heap_size_limit * values.SUBSCRIPTION_HEAP_LIMIT) /
            SUBSCRIBER_HEAP_BYTES,
        ),
      maxSse:
        values.MAX_SSE_SUBSCRIPTIONS ??
        Math.max(1, Math.floor((values.HTTP_MAX_CONNECTIONS * 3) / 4)),
      maxPerConnection: values.MAX_SUBSCRIPTIONS_PER_CONNECTION,
      maxPerClient: values.MAX_SUBSCRIPTIONS_PER_CLIENT,
      maxHeapShare: values.SUBSCRIPTION_HEAP_LIMIT,
      keepAliveMs: values.SUBSCRIPTION_KEEP_ALIVE_MS,
      backlog: values.SUBSCRIPTION_BACKLOG,
      maxBufferedBytes: values.SUBSCRIPTION_MAX_BUFFERED_BYTES,
    },
    websockets: {
      maxTotal:
        values.MAX_WEBSOCKETS ?? Math.max(1, Math.floor((values.HTTP_MAX_CONNECTIONS * 3) / 4)),
      maxPerClient: values.MAX_WEBSOCKETS_PER_CLIENT,
      idleTimeoutMs: values.WEBSOCKET_IDLE_TIMEOUT_MS,
      maxBufferedBytes: values.WEBSOCKET_MAX_BUFFERED_BYTES,
      maxTotalBufferedBytes: values.WEBSOCKET_MAX_TOTAL_BUFFERED_BYTES,
    },
    graphiql: values.GRAPHIQL ?? !production,
    statusBoard: values.STATUS_BOARD,
    cors:
      values.CORS_ORIGINS.length > 0
        ? { origins: values.CORS_ORIGINS, allowedHeaders: values.CORS_ALLOWED_HEADERS }
        : undefined,
    persistedDocuments: {
      file: values.PERSISTED_DOCUMENTS_FILE,
      only: values.PERSISTED_DOCUMENTS_ONLY,
    },
    // `0` twice is two free ports; the same fixed port twice is one listener.
    metricsPort:
      values.METRICS_PORT === values.PORT && values.PORT !== 0 ? undefined : values.METRICS_PORT,
    tracing: tracingOf(values),
    redis:
      values.REDIS_URL === undefined
        ? undefined
        : {
            url: values.REDIS_URL,
            loggedUrl: withoutPassword(values.REDIS_URL),
            keyPrefix: values.REDIS_KEY_PREFIX,
            commandTimeoutMs: values.REDIS_COMMAND_TIMEOUT_MS,
          },
    exposeErrorDetails: values.NODE_ENV === 'development',
  });
}

function tracingOf(values: Values): TracingConfig | undefined {
  const base = values.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesUrl =
    values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (base === undefined ? undefined : `${base}/v1/traces`);
  if (tracesUrl === undefined || values.OTEL_SDK_DISABLED) return undefined;
  const sampler = values.OTEL_TRACES_SAMPLER;
  return {
    tracesUrl,
    headers: values.OTEL_EXPORTER_OTLP_HEADERS,
    serviceName: values.OTEL_SERVICE_NAME,
    exportDelayMs: values.OTEL_BSP_SCHEDULE_DELAY,
    sampler: {
      parentBased: sampler.startsWith('parentbased_'),
      ratio: sampler.endsWith('always_on')
        ? 1
        : sampler.endsWith('always_off')
          ? 0
          : values.OTEL_TRACES_SAMPLER_ARG,
    },
  };
}

/** A URL as logs may show it: its password, if any, cut. */
function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password === '') return url;
  parsed.password = '';
  return parsed.href;
}

function deepFreeze<Value extends object>(value: Value): Value {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null) deepFreeze(child);
  }
  return Object.freeze(value);
}
