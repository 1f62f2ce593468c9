import { z } from 'zod';
import { env, wholeNumber } from './variable.js';

/** The policy both upstreams share; each may set its own timeout. */
export const Upstreams = z
  .object({
    timeoutMs: env('UPSTREAM_TIMEOUT_MS', wholeNumber(1), {
      description: 'Time allowed per upstream attempt, and again for reading its body.',
      default: '5000',
    }),
    retries: env('UPSTREAM_RETRIES', wholeNumber(0), {
      description:
        'Retries of an upstream GET after a network error or a 5xx. POSTs are never retried.',
      default: '2',
    }),
    retryDelayMs: env('UPSTREAM_RETRY_DELAY_MS', wholeNumber(0), {
      description: 'Delay before the first retry; each further retry doubles it, up to 2 s.',
      default: '300',
    }),
    maxConcurrentRequests: env('UPSTREAM_MAX_CONCURRENT_REQUESTS', wholeNumber(1), {
      description:
        'Requests in flight to one upstream at most; more wait their turn for up to the upstream timeout, then fail with `UPSTREAM_UNAVAILABLE`.',
      default: '32',
    }),
    circuitFailureThreshold: env('CIRCUIT_FAILURE_THRESHOLD', wholeNumber(1), {
      description: "Consecutive failures (after retries) that open an upstream's circuit.",
      default: '5',
    }),
    circuitCooldownMs: env('CIRCUIT_COOLDOWN_MS', wholeNumber(0), {
      description: 'How long an open circuit fails fast before one probe goes through.',
      default: '30000',
    }),
  })
  .meta({ title: 'Upstreams' });
