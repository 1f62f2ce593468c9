import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { env, oneOf, wholeNumber } from './variable.js';

/** The most workers a replica runs: each is a whole gateway, with its own heap and open files. */
export const MAX_WORKERS = 64;

/** `auto` (the cores this process may use, at most `MAX_WORKERS`) or a whole number of workers. */
const workerCount = z
  .string()
  .regex(/^(auto|\d+)$/, { error: `must be auto or a whole number from 1 to ${MAX_WORKERS}` })
  .transform((text) =>
    text === 'auto' ? Math.min(availableParallelism(), MAX_WORKERS) : Number(text),
  )
  .pipe(
    z
      .number()
      .min(1, { error: 'must be at least 1' })
      .max(MAX_WORKERS, { error: `must be at most ${MAX_WORKERS}` }),
  );

/** Listening, logging and connections; `server` is what is left once the rest is named. */
export const Server = z
  .object({
    port: env('PORT', wholeNumber(0, 65_535), {
      default: '4000',
      description: 'Port to listen on (`0` picks a free one).',
    }),
    host: env('HOST', z.string(), {
      unset: 'all interfaces',
      description: 'Address to listen on.',
    }),
    environment: env('NODE_ENV', oneOf(['development', 'production', 'test']), {
      default: 'development',
      description:
        '`production` requires both upstream URLs, masks internal error details, turns GraphiQL and introspection off and marks the session cookie `Secure` (each can be turned back on).',
    }),
    logLevel: env(
      'LOG_LEVEL',
      oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
      { default: 'info', description: 'Least severe log level written to stdout.' },
    ),
    logRequests: z.object({
      mode: env('LOG_REQUESTS', oneOf(['sampled', 'all', 'uncached', 'errors']), {
        default: 'sampled',
        description:
          'Which requests get a `request` log line: `sampled`, every one but response-cache hits past `LOG_SAMPLED_HITS_PER_SECOND` in a second, which one line a second counts (`request lines skipped`); `all`, every one; `uncached`, every one but response-cache hits; `errors`, only answers with an error or a verification outcome. Errors are logged whatever the setting, and metrics count every request; healthcheck probes that pass (`/health`, `/readiness`) are logged at debug only. At tens of thousands of hits a second, a line each is megabytes of log a second; see docs/operations.md.',
      }),
      sampledHitsPerSecond: env('LOG_SAMPLED_HITS_PER_SECOND', wholeNumber(1, 1_000_000), {
        default: '100',
        description:
          'With `LOG_REQUESTS=sampled`, the response-cache hits a second that get their own `request` line; the rest are counted in one line a second.',
      }),
    }),
    trustedProxies: env('TRUSTED_PROXIES', wholeNumber(0, 10), {
      default: '0',
      description:
        'Proxies in front of the gateway that append to `X-Forwarded-For`; the client of a request is the address the outermost one saw. `0`: the socket peer, and the header is ignored (a client could write anything in it).',
    }),
    workers: env('GATEWAY_WORKERS', workerCount, {
      default: '1',
      description:
        "Gateway processes of this replica (`auto`: one per core it may use), sharing its port through node:cluster, as Hive Gateway's `--fork`: each is a whole gateway, with its own heap (the node flags' `--max-old-space-size`), open-file limit and `HTTP_MAX_CONNECTIONS`, so that one replica serves from every core and holds more subscribers than one process's open files allow. A primary process forks them, replaces one that dies, and on SIGTERM drains them all. They poll each status document once between them and hear each change at the same moment, through the primary without `REDIS_URL` (its stored documents kept within `STATUS_PAGES_MAX_BYTES`) and through Redis with it. What stays per worker: the response cache, the parse cache and APQ's registered documents (a hash registered on one connection may be unknown on another: `PERSISTED_QUERY_NOT_FOUND`, and the client sends the query again, as across replicas); without `REDIS_URL`, `verifyContract` allowances too (`VERIFY_RATE_LIMIT` counts per worker, so a client whose connections land on several workers may start up to that many times as many). The budget of watched verification jobs' polls (`VERIFY_WATCH_MAX_POLLS_PER_SECOND`) is the replica's, divided between its workers. `1`: one process, no primary, exactly as before.",
    }),
    shutdownGraceMs: env('SHUTDOWN_GRACE_MS', wholeNumber(0), {
      default: '30000',
      description:
        'On SIGTERM, how long in-flight requests get to finish (answers carry `Connection: close` meanwhile). Cover the longest operation: an APIv2 `verifyContract` waits up to `VERIFY_WAIT_MS` plus a poll.',
    }),
    http: z.object({
      headersTimeoutMs: env('HTTP_HEADERS_TIMEOUT_MS', wholeNumber(1), {
        default: '10000',
        description: 'Time a client gets to send its request headers.',
      }),
      requestTimeoutMs: env('HTTP_REQUEST_TIMEOUT_MS', wholeNumber(1), {
        default: '30000',
        description:
          'Time a client gets to send its whole request, body included (a slow body gets 408).',
      }),
      keepAliveTimeoutMs: env('HTTP_KEEP_ALIVE_TIMEOUT_MS', wholeNumber(1), {
        default: '5000',
        description: 'How long an idle keep-alive connection is kept open.',
      }),
      socketIdleTimeoutMs: env('HTTP_SOCKET_IDLE_TIMEOUT_MS', wholeNumber(1), {
        default: '60000',
        description:
          'A connection with nothing read or written for this long is closed: a client that stops reading its answer cannot hold the socket.',
      }),
      maxConnections: env('HTTP_MAX_CONNECTIONS', wholeNumber(1), {
        default: '1000',
        description: 'Open connections at most; further ones are refused until some close.',
      }),
    }),
  })
  .transform(({ environment, logLevel, logRequests, http, ...server }) => ({
    server,
    http,
    environment,
    logLevel,
    logRequests,
    exposeErrorDetails: environment === 'development',
  }))
  .meta({ title: 'Server' });
