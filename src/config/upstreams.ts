import { z } from 'zod';
import { env, wholeNumber } from './variable.js';

/** The policy both upstreams share; each may set its own timeout. */
export const Upstreams = z
  .object({
    timeoutMs: env('UPSTREAM_TIMEOUT_MS', wholeNumber(1), {
      default: '5000',
      description: 'Time allowed per upstream attempt, and again for reading its body.',
    }),
    retries: env('UPSTREAM_RETRIES', wholeNumber(0), {
      default: '2',
      description:
        'Retries of an upstream GET after a network error or a 5xx. POSTs are never retried.',
    }),
    retryDelayMs: env('UPSTREAM_RETRY_DELAY_MS', wholeNumber(0), {
      default: '300',
      description: 'Delay before the first retry; each further retry doubles it, up to 2 s.',
    }),
    maxConcurrentRequests: env('UPSTREAM_MAX_CONCURRENT_REQUESTS', wholeNumber(1), {
      default: '32',
      description:
        'Requests in flight to one upstream at most; more wait their turn for up to the upstream timeout, then fail with `UPSTREAM_UNAVAILABLE`.',
    }),
    circuitFailureThreshold: env('CIRCUIT_FAILURE_THRESHOLD', wholeNumber(1), {
      default: '5',
      description: "Consecutive failures (after retries) that open an upstream's circuit.",
    }),
    circuitCooldownMs: env('CIRCUIT_COOLDOWN_MS', wholeNumber(0), {
      default: '30000',
      description:
        "How long an open circuit fails fast before one probe goes through; and how long a question of `VERIFY_API=auto` that the verification service did not answer at all is remembered: verifications meanwhile answer that it is unreachable at once, instead of each waiting out the question's retries.",
    }),
  })
  .meta({ title: 'Upstreams' });
