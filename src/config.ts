/*
 * The gateway's whole configuration, parsed from the environment once with zod: each section
 * (src/config/) writes every variable once, where its value lands in `Config`, with its
 * description and default beside it; `Config` is what they parse to. docs/configuration.md is
 * printed from `CONFIG_VARIABLES` (`npm run generate`), and the test suite fails when it is stale.
 */
import { z } from 'zod';
import { Browsers } from './config/browsers.js';
import { Limits } from './config/limits.js';
import { Observability } from './config/observability.js';
import { PersistedDocuments } from './config/persisted-documents.js';
import { Replicas } from './config/replicas.js';
import { Server } from './config/server.js';
import { StatusFeed } from './config/status-feed.js';
import { Subscriptions } from './config/subscriptions.js';
import { Upstreams } from './config/upstreams.js';
import { type Variable, type VariableNames, variables, whenRead } from './config/variable.js';
import { Verification } from './config/verification.js';

/** How often Yoga writes a keep-alive comment into an SSE stream (fixed by Yoga). */
const SSE_PING_MS = 12_000;

/** The sections, in the order docs/configuration.md lists them; the rules between them; the shape. */
const Environment = z
  .object({
    server: Server,
    statusFeed: StatusFeed,
    verification: Verification,
    upstream: Upstreams,
    limits: Limits,
    subscriptions: Subscriptions,
    browsers: Browsers,
    persistedDocuments: PersistedDocuments,
    observability: Observability,
    redis: Replicas,
  })
  .superRefine(
    ({ limits: { maxExecutionMs }, verification: { waitMs } }, context) => {
      if (maxExecutionMs > waitMs) return;
      context.addIssue({
        code: 'custom',
        path: ['limits', 'maxExecutionMs'],
        message: `(${maxExecutionMs}) must exceed VERIFY_WAIT_MS (${waitMs}): a verifyContract may wait that long`,
      });
    },
    whenRead('limits.maxExecutionMs', 'verification.waitMs'),
  )
  .superRefine(
    ({ server: { http }, subscriptions: { subscriptions } }, context) => {
      if (http.socketIdleTimeoutMs > Math.max(subscriptions.keepAliveMs, SSE_PING_MS)) return;
      context.addIssue({
        code: 'custom',
        path: ['server', 'http', 'socketIdleTimeoutMs'],
        message: `(${http.socketIdleTimeoutMs}) must exceed SUBSCRIPTION_KEEP_ALIVE_MS (${subscriptions.keepAliveMs}) and the 12000 ms between SSE keep-alive lines: idle subscriptions would be cut`,
      });
    },
    whenRead('server.http.socketIdleTimeoutMs', 'subscriptions.subscriptions.keepAliveMs'),
  )
  .superRefine(
    ({ server: { http }, subscriptions: { subscriptions, websockets } }, context) => {
      const { maxConnections } = http;
      for (const [path, value, what] of [
        [['websockets', 'maxTotal'], websockets.maxTotal, 'WebSockets'],
        [['subscriptions', 'maxSse'], subscriptions.maxSse, 'SSE streams'],
      ] as const) {
        if (value === undefined || value < maxConnections) continue;
        context.addIssue({
          code: 'custom',
          path: ['subscriptions', ...path],
          message: `(${value}) must be below HTTP_MAX_CONNECTIONS (${maxConnections}): ${what} would leave no connection for /health and HTTP`,
        });
      }
    },
    whenRead(
      'server.http.maxConnections',
      'subscriptions.subscriptions.maxSse',
      'subscriptions.websockets.maxTotal',
    ),
  )
  .transform(
    ({ server, statusFeed, verification, upstream, limits, subscriptions, browsers, ...rest }) => {
      const production = server.environment === 'production';
      const policy = ({ timeoutMs = upstream.timeoutMs }) => ({ ...upstream, timeoutMs });
      const threeQuarters = Math.max(1, Math.floor((server.http.maxConnections * 3) / 4));
      const { graphiql = !production, introspection = !production, ...browser } = browsers;
      const { port } = server.server;
      const { metricsPort, tracing } = rest.observability;
      return deepFreeze({
        ...server,
        statusFeed: { ...statusFeed, upstream: policy(statusFeed.upstream) },
        verification: {
          ...verification,
          sessionCookieSecure: verification.sessionCookieSecure ?? production,
          upstream: policy(verification.upstream),
        },
        limits: { ...limits, introspection },
        subscriptions: {
          ...subscriptions.subscriptions,
          maxSse: subscriptions.subscriptions.maxSse ?? threeQuarters,
        },
        websockets: {
          ...subscriptions.websockets,
          maxTotal: subscriptions.websockets.maxTotal ?? threeQuarters,
        },
        ...browser,
        graphiql,
        persistedDocuments: rest.persistedDocuments,
        // `0` twice is two free ports; the same fixed port twice is one listener.
        metricsPort: metricsPort === port && port !== 0 ? undefined : metricsPort,
        tracing,
        redis: rest.redis,
      });
    },
  );

/** The configuration, shaped for the code that consumes it; frozen. */
export type Config = z.output<typeof Environment>;
export type UpstreamPolicy = Config['statusFeed']['upstream'];
export type StatusPageConfig = Config['statusFeed']['pages'][number];
export type QueryLimits = Pick<
  Config['limits'],
  'maxDepth' | 'maxAliases' | 'maxCost' | 'maxTokens' | 'maxDirectives' | 'introspection'
>;
export type TracingConfig = NonNullable<Config['tracing']>;
export type RedisConfig = NonNullable<Config['redis']>;

/** One environment variable, as docs/configuration.md lists it. */
export interface ConfigVariable extends Variable {
  readonly section: string;
  /** Where its text goes in the input `Environment` parses. */
  readonly path: readonly PropertyKey[];
}
export type ConfigVariableName = VariableNames<typeof Environment>;

/** The variables of `schema`, in its order, each with its section (a `title`) and its path. */
function variablesOf(
  schema: z.core.$ZodType,
  path: PropertyKey[] = [],
  section = '',
): ConfigVariable[] {
  const variable = variables.get(schema);
  if (variable !== undefined) return [{ ...variable, section, path }];
  const title = z.globalRegistry.get(schema)?.title ?? section;
  if (schema instanceof z.ZodPipe) return variablesOf(schema.in, path, title);
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape).flatMap(([key, child]) =>
    variablesOf(child, [...path, key], title),
  );
}

const VARIABLES = variablesOf(Environment);

/** Every variable the gateway reads, in the order docs/configuration.md lists them. */
export const CONFIG_VARIABLES = Object.fromEntries(
  VARIABLES.map((variable) => [variable.name, variable]),
) as Readonly<Record<ConfigVariableName, ConfigVariable>>;
if (Object.keys(CONFIG_VARIABLES).length < VARIABLES.length) {
  throw new Error('A configuration variable is written twice in src/config/');
}

/** The configuration is unusable; `problems` lists every reason, each naming its variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

/**
 * Reads the configuration from the environment, once. Every problem is reported together, so an
 * operator fixes it in one go; empty values count as unset; variables it does not know are ignored.
 */
export function loadConfig(
  source: Readonly<Record<string, string | undefined>> = process.env,
): Config {
  const input: Record<PropertyKey, unknown> = {};
  for (const { name, path, default: fallback } of VARIABLES) {
    let object = input;
    for (const key of path.slice(0, -1)) {
      object[key] ??= {};
      object = object[key] as typeof object;
    }
    const text = source[name]?.trim() || fallback;
    if (text !== undefined) object[path.at(-1) as PropertyKey] = text;
  }
  const parsed = Environment.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new ConfigError(problemsOf(parsed.error.issues));
}

/**
 * Each issue as a problem naming its variable (and where in it: `pages[2].chains[0].chainId`), in
 * the order docs/configuration.md lists them.
 */
function problemsOf(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues
    .map((issue) => {
      const at = VARIABLES.findIndex(({ path }) => path.every((key, i) => issue.path[i] === key));
      const within = z.core.toDotPath(issue.path.slice(VARIABLES[at]?.path.length));
      return {
        at,
        problem: [VARIABLES[at]?.name, within, issue.message].filter(Boolean).join(' '),
      };
    })
    .sort((a, b) => a.at - b.at)
    .map(({ problem }) => problem);
}

type Frozen<T> = T extends RegExp
  ? T
  : T extends object
    ? { readonly [K in keyof T]: Frozen<T[K]> }
    : T;

function deepFreeze<Value extends object>(value: Value): Frozen<Value> {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null) deepFreeze(child);
  }
  return Object.freeze(value) as Frozen<Value>;
}
