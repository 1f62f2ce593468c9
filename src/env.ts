import { z } from 'zod';

const wholeNumber = (name: string, min: number) =>
  z.coerce
    .number({ error: `${name} must be a number` })
    .int({ error: `${name} must be a whole number` })
    .min(min, { error: `${name} must be at least ${min}` });

const integer = (name: string, fallback: number, min: number) =>
  wholeNumber(name, min).default(fallback);

const upstreamBaseUrl = (name: string, suffix?: string) =>
  z
    .url({ protocol: /^https?$/, error: `${name} is not an http(s) URL` })
    .refine(
      (url) =>
        suffix === undefined ||
        !URL.canParse(url) ||
        new URL(url).pathname.replace(/\/+$/, '').endsWith(suffix),
      { error: `${name} must end in ${suffix}` },
    )
    .transform((url) => url.replace(/\/+$/, ''))
    .optional();

const flag = (name: string) =>
  z
    .enum(['true', 'false', '1', '0'], { error: `${name} must be true or false` })
    .transform((value) => value === 'true' || value === '1')
    .optional();

const EnvironmentModel = z.object({
  PORT: integer('PORT', 4000, 0).pipe(
    z.number().max(65535, { error: 'PORT must be at most 65535' }),
  ),
  HOST: z.string().min(1, { error: 'HOST must not be empty' }).optional(),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  STATUS_BASE_URL: upstreamBaseUrl('STATUS_BASE_URL', '/api/v2'),
  VERIFY_BASE_URL: upstreamBaseUrl('VERIFY_BASE_URL'),
  STATUS_CACHE_TTL_MS: integer('STATUS_CACHE_TTL_MS', 10_000, 0),
  STATUS_MAX_STALE_MS: integer('STATUS_MAX_STALE_MS', 300_000, 0),
  UPSTREAM_TIMEOUT_MS: integer('UPSTREAM_TIMEOUT_MS', 5_000, 1),
  UPSTREAM_RETRIES: integer('UPSTREAM_RETRIES', 2, 0),
  /** Unset: UPSTREAM_TIMEOUT_MS. */
  STATUS_TIMEOUT_MS: wholeNumber('STATUS_TIMEOUT_MS', 1).optional(),
  /** Unset: UPSTREAM_TIMEOUT_MS. */
  VERIFY_TIMEOUT_MS: wholeNumber('VERIFY_TIMEOUT_MS', 1).optional(),
  CIRCUIT_FAILURE_THRESHOLD: integer('CIRCUIT_FAILURE_THRESHOLD', 5, 1),
  CIRCUIT_COOLDOWN_MS: integer('CIRCUIT_COOLDOWN_MS', 30_000, 0),
  VERIFY_API: z
    .enum(['session', 'v2'], { error: 'VERIFY_API must be session or v2' })
    .default('session'),
  VERIFY_WAIT_MS: integer('VERIFY_WAIT_MS', 20_000, 0),
  VERIFY_CHAINS_TTL_MS: integer('VERIFY_CHAINS_TTL_MS', 3_600_000, 0),
  MAX_BODY_BYTES: integer('MAX_BODY_BYTES', 262_144, 1),
  MAX_DEPTH: integer('MAX_DEPTH', 12, 1),
  MAX_ALIASES: integer('MAX_ALIASES', 30, 0),
  MAX_COST: integer('MAX_COST', 5_000, 1),
  MAX_TOKENS: integer('MAX_TOKENS', 2_000, 1),
  MAX_DIRECTIVES: integer('MAX_DIRECTIVES', 20, 0),
  /** Unset: on outside production. */
  GRAPHIQL: flag('GRAPHIQL'),
  /** Unset: on outside production. */
  INTROSPECTION: flag('INTROSPECTION'),
  CORS_ORIGINS: z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((origin) => origin.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z.url({
          protocol: /^https?$/,
          error: 'CORS_ORIGINS must be a comma-separated list of http(s) origins',
        }),
      ),
    )
    .default([]),
  /** Unset: Secure in production only. */
  SESSION_COOKIE_SECURE: flag('SESSION_COOKIE_SECURE'),
});

export type Environment = Readonly<z.output<typeof EnvironmentModel>>;

export class EnvironmentError extends Error {
  override readonly name = 'EnvironmentError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.problems = problems;
  }
}

/**
 * Parses the process environment once. Every problem is reported together, so an operator fixes
 * the configuration in one go; empty strings count as unset.
 */
export function parseEnvironment(source: NodeJS.ProcessEnv = process.env): Environment {
  const present = Object.fromEntries(
    Object.entries(source).filter(([, value]) => value !== undefined && value.trim() !== ''),
  );
  const result = EnvironmentModel.safeParse(present);
  if (!result.success) {
    throw new EnvironmentError(result.error.issues.map((issue) => issue.message));
  }
  return Object.freeze(result.data);
}
