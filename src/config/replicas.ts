import { z } from 'zod';
import { env, wholeNumber } from './variable.js';

/** A URL as logs may show it: its password, if any, cut. */
function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password === '') return url;
  parsed.password = '';
  return parsed.href;
}

/** The Redis the replicas share state through; none: each replica alone, in memory. */
export const Replicas = z
  .object({
    url: env(
      'REDIS_URL',
      z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }),
      {
        unset: 'each replica alone, in memory',
        description:
          "Redis shared by the gateway's replicas (`redis://[user:password@]host[:port][/db]`, `rediss://` for TLS): they share status feed snapshots (one upstream request per TTL across them all), change events, `verifyContract` allowances and the response cache's validity through it. While it is unreachable each replica works alone. The password is never logged.",
      },
    ),
    keyPrefix: env(
      'REDIS_KEY_PREFIX',
      z.string().regex(/^[\w.:-]{1,64}$/, {
        error: 'must be 1 to 64 letters, digits, `_`, `.`, `:` or `-`',
      }),
      {
        default: 'ledger-status-gateway:',
        description:
          'Prefix of every Redis key and channel the gateway uses, so that several gateways (or environments) can share one Redis. Replicas of one gateway must use the same.',
      },
    ),
    commandTimeoutMs: env('REDIS_COMMAND_TIMEOUT_MS', wholeNumber(1), {
      default: '500',
      description:
        'Time one Redis command may take. Past it the replica works alone until Redis answers again, so that a hung Redis never holds a request longer than this.',
    }),
  })
  .transform(({ url, ...redis }) =>
    url === undefined ? undefined : { url, loggedUrl: withoutPassword(url), ...redis },
  )
  .meta({ title: 'Replicas' });
