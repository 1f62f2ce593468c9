import { z } from 'zod';
import { env, flag, httpUrl, oneOf, requiredUrl, wholeNumber } from './variable.js';

export const Verification = z
  .object({
    baseUrl: env(
      'VERIFY_BASE_URL',
      z.string({ error: requiredUrl('verification service') }).pipe(httpUrl()),
      {
        description:
          'The contract verification service (a Sourcify server). Required by the gateway; `npm start` starts a simulator for it when it is unset.',
      },
    ),
    api: env('VERIFY_API', oneOf(['auto', 'session', 'v2']), {
      default: 'auto',
      description:
        "The service's API: `auto` asks the server which it speaks (once, remembered, asked again after a failure that suggests the server changed) and prefers APIv2; `session` forces Sourcify's session API (servers before 3.10), `v2` forces APIv2 (today's Sourcify). The source mutations, `verificationJobChanged` and the bulk lookups need APIv2.",
    }),
    upstream: z.object({
      timeoutMs: env('VERIFY_TIMEOUT_MS', wholeNumber(1), {
        unset: '`UPSTREAM_TIMEOUT_MS`',
        description:
          '`UPSTREAM_TIMEOUT_MS` for the verification service alone; verifying can take a while.',
      }),
    }),
    waitMs: env('VERIFY_WAIT_MS', wholeNumber(0), {
      default: '20000',
      description:
        'With APIv2, how long `verifyContract` waits for the job before answering `VerificationPending`.',
    }),
    pollIntervalMs: env('VERIFY_POLL_INTERVAL_MS', wholeNumber(1), {
      default: '250',
      description:
        'With APIv2, the first pause between polls of a job; each pause is 1.5 times the last, up to 2 s.',
    }),
    watch: z
      .object({
        intervalMs: env('VERIFY_WATCH_INTERVAL_MS', wholeNumber(100, 600_000), {
          default: '1000',
          description:
            'The first pause between polls of a job that `verificationJobChanged` subscribers follow, and the pause after it changes; each pause while it does not change is 1.5 times the last, up to `VERIFY_WATCH_MAX_INTERVAL_MS`. All subscribers of one job on a replica share each poll, and the replicas share it through Redis when `REDIS_URL` is set.',
        }),
        maxIntervalMs: env('VERIFY_WATCH_MAX_INTERVAL_MS', wholeNumber(100, 3_600_000), {
          default: '30000',
          description:
            "The longest pause between polls of a watched job still running in time, so its subscribers hear it completed at most this late. 30 s: a job that has not finished within half a minute is a long compile, for which half a minute more is small, and at the ceiling 100 watched jobs cost about 3 polls a second, a third of `VERIFY_WATCH_MAX_POLLS_PER_SECOND`'s default. At least `VERIFY_WATCH_INTERVAL_MS`.",
        }),
        staleIntervalMs: env('VERIFY_WATCH_STALE_INTERVAL_MS', wholeNumber(100, 3_600_000), {
          default: '300000',
          description:
            'The longest pause between polls of a watched job reported stale (running longer than `VERIFY_JOB_STALE_MS`), reached by the same growth. 5 min: such a job is one Sourcify has likely lost (it has left such jobs "running" for hours before failing them with `job_abandoned`), its subscribers were told what to do, and hearing its end a few minutes late costs them little next to its age, while 100 stale jobs cost one poll every 3 s. At least `VERIFY_WATCH_MAX_INTERVAL_MS`.',
        }),
        maxPollsPerSecond: env('VERIFY_WATCH_MAX_POLLS_PER_SECOND', wholeNumber(1, 1_000), {
          default: '10',
          description:
            "Polls of the verification service for all watched jobs together, per second, on this replica (each replica has its own budget; with `REDIS_URL`, reading another replica's poll from Redis counts as a poll too): evenly spaced. Clients with polls due take turns (a job several clients follow is queued for the one with the fewest polls queued), and within a client the poll due longest goes first: with C clients having polls due, a poll waits at most about C ÷ this seconds past its time, and with N jobs watched at most N ÷ this (100 jobs at 10: 10 s) however they are spread; jobs that do not change back off, so that 100 jobs at `VERIFY_WATCH_MAX_INTERVAL_MS` need about 3 a second. Without it one client's `MAX_SUBSCRIPTIONS_PER_CLIENT` (100) watches of jobs that never complete would poll the service 100 times a second for as long as it holds them; 10 keeps the gateway's polls of the service (which rate-limits by the gateway's address) a small, fixed load.",
        }),
      })
      .superRefine(({ intervalMs, maxIntervalMs, staleIntervalMs }, context) => {
        for (const [key, value, floor, name] of [
          ['maxIntervalMs', maxIntervalMs, intervalMs, 'VERIFY_WATCH_INTERVAL_MS'],
          ['staleIntervalMs', staleIntervalMs, maxIntervalMs, 'VERIFY_WATCH_MAX_INTERVAL_MS'],
        ] as const) {
          if (value >= floor) continue;
          context.addIssue({
            code: 'custom',
            path: [key],
            message: `(${value}) must be at least ${name} (${floor}): a pause never shrinks while a job does not change`,
          });
        }
      }),
    jobStaleMs: env('VERIFY_JOB_STALE_MS', wholeNumber(1), {
      default: '600000',
      description:
        'A job still running this long after it started is reported `stale` (`VerificationPending.stale`, with what the user can do in its `message`): Sourcify has had jobs stuck "running" for hours, which it cannot cancel and which block resubmitting the contract.',
    }),
    maxSourceBytes: env('VERIFY_MAX_SOURCE_BYTES', wholeNumber(1024, 64 * 1024 * 1024), {
      default: '8388608',
      description:
        'Largest source input `verifyContractFromSource` (its `stdJsonInput`) and `verifyContractFromMetadata` (its `metadata` and `sources` together) accept, in bytes of JSON; larger is refused with `INPUT_TOO_LARGE` before anything is sent. A request carrying one of these mutations may be this much larger than `MAX_BODY_BYTES` (send the input as a variable, over HTTP POST); every other request keeps `MAX_BODY_BYTES`.',
    }),
    maxConcurrentUploads: env('VERIFY_MAX_CONCURRENT_UPLOADS', wholeNumber(1, 1_000), {
      default: '4',
      description:
        'Request bodies above `MAX_BODY_BYTES` (source verifications) handled at once on this replica, at most, even when `REQUEST_BODIES_HEAP_SHARE` would admit more; more are refused with 503 `TOO_MANY_UPLOADS` until one is answered.',
    }),
    lookupConcurrency: env('VERIFY_LOOKUP_CONCURRENCY', wholeNumber(1, 100), {
      default: '8',
      description:
        'Contract lookups one operation has in flight to the service at once (`contracts` with up to 100 addresses, `_entities`); the rest wait their turn.',
    }),
    lookupTtlMs: env('VERIFY_LOOKUP_TTL_MS', wholeNumber(0), {
      default: '30000',
      description:
        "How long a contract lookup is served from memory; after that it is asked again with the service's ETag (`If-None-Match`), and a `304 Not Modified` renews it without a body.",
    }),
    lookupCacheBytes: env('VERIFY_LOOKUP_CACHE_BYTES', wholeNumber(0), {
      default: '8388608',
      description:
        'Bytes of contract lookups kept in memory (each counted as its answer, its key and 512 bytes), least recently used dropped first.',
    }),
    chainsTtlMs: env('VERIFY_CHAINS_TTL_MS', wholeNumber(0), {
      default: '3600000',
      description:
        "How long the service's chain list (`supportedChains`) is trusted before it is fetched again.",
    }),
    clientQuota: z.object({
      limit: env('VERIFY_RATE_LIMIT', wholeNumber(1), {
        default: '10',
        description:
          "Verifications (`verifyContract`, `verifyContractFromSource`, `verifyContractFromMetadata`, `verifyContractBySimilarity`, counted together) one client may start per `VERIFY_RATE_WINDOW_MS`; more answer `RateLimitedError` with `retryAfterSeconds`. The service limits by the gateway's address, so this keeps one client from spending every user's quota.",
      }),
      windowMs: env('VERIFY_RATE_WINDOW_MS', wholeNumber(1), {
        default: '60000',
        description: 'The window `VERIFY_RATE_LIMIT` counts in.',
      }),
    }),
    sessionCookieSecure: env('SESSION_COOKIE_SECURE', flag, {
      unset: 'on in production',
      description:
        'Mark the `verify_session` cookie `Secure`, so browsers send it over HTTPS only.',
    }),
  })
  .meta({ title: 'Verification service' });
