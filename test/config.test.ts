import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../src/config.js';

const UPSTREAMS = {
  STATUS_BASE_URL: 'https://status.hedera.com/api/v2/',
  VERIFY_BASE_URL: 'https://verify.example.com/server',
};

/** What each upstream gets by default: one policy, written once, that both share. */
const UPSTREAM_DEFAULTS = {
  timeoutMs: 5_000,
  maxConcurrentRequests: 32,
  retries: 2,
  retryDelayMs: 300,
  circuitFailureThreshold: 5,
  circuitCooldownMs: 30_000,
};

const problemsOf = (source: Record<string, string>): readonly string[] => {
  try {
    loadConfig(source);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('loadConfig', () => {
  it('applies the documented defaults, shaped for the code that uses them', () => {
    expect(loadConfig(UPSTREAMS)).toEqual({
      server: {
        port: 4000,
        host: undefined,
        shutdownGraceMs: 30_000,
        trustedProxies: 0,
        workers: 1,
      },
      http: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 5_000,
        socketIdleTimeoutMs: 60_000,
        maxConnections: 1_000,
      },
      environment: 'development',
      logLevel: 'info',
      logRequests: { mode: 'sampled', sampledHitsPerSecond: 100 },
      statusFeed: {
        pages: [
          {
            slug: 'default',
            baseUrl: 'https://status.hedera.com/api/v2',
            name: undefined,
            chains: [],
            versionPattern: undefined,
            tags: [],
          },
        ],
        cacheTtlMs: 10_000,
        maxStaleMs: 300_000,
        pollIntervalMs: 10_000,
        maxBytes: Math.floor(getHeapStatistics().heap_size_limit / 5),
        idleMs: 300_000,
        fetchesPerHost: 4,
        overviewDeadlineMs: 1_000,
        upstream: UPSTREAM_DEFAULTS,
      },
      verification: {
        baseUrl: 'https://verify.example.com/server',
        api: 'auto',
        waitMs: 20_000,
        pollIntervalMs: 250,
        watch: {
          intervalMs: 1_000,
          maxIntervalMs: 30_000,
          staleIntervalMs: 300_000,
          maxPollsPerSecond: 10,
        },
        jobStaleMs: 600_000,
        maxSourceBytes: 8_388_608,
        maxConcurrentUploads: 4,
        lookupConcurrency: 8,
        lookupTtlMs: 30_000,
        lookupCacheBytes: 8_388_608,
        chainsTtlMs: 3_600_000,
        sessionCookieSecure: false,
        clientQuota: { limit: 10, windowMs: 60_000 },
        upstream: UPSTREAM_DEFAULTS,
      },
      limits: {
        bodiesHeapShare: 0.2,
        maxBodyBytes: 262_144,
        maxDepth: 12,
        maxAliases: 30,
        maxCost: 5_000,
        maxTokens: 2_000,
        maxDirectives: 20,
        json: { maxValues: 100_000, maxDepth: 64 },
        maxResolvedFields: 20_000,
        maxAnswerBytes: 5_000_000,
        maxExecutionMs: 30_000,
        maxEntityRepresentations: 200,
        maxPagesPerOperation: 50,
        introspection: true,
      },
      subscriptions: {
        // As many 16 KiB subscribers as fit in three quarters of the heap limit.
        maxTotal: Math.floor((getHeapStatistics().heap_size_limit * 0.75) / 16_384),
        maxSse: 750,
        maxPerConnection: 20,
        maxPerClient: 100,
        maxHeapShare: 0.75,
        keepAliveMs: 12_000,
        backlog: 100,
        maxBufferedBytes: 1_048_576,
      },
      websockets: {
        maxTotal: 750,
        maxPerClient: 32,
        idleTimeoutMs: 300_000,
        maxBufferedBytes: 1_048_576,
        maxTotalBufferedBytes: undefined,
      },
      graphiql: true,
      statusBoard: true,
      cors: undefined,
      persistedDocuments: { file: undefined, only: false },
      metricsPort: undefined,
      tracing: undefined,
      redis: undefined,
      exposeErrorDetails: true,
    });
  });

  it('polls at the cache TTL unless told, never in a tight loop', () => {
    expect(
      loadConfig({ ...UPSTREAMS, STATUS_CACHE_TTL_MS: '2500' }).statusFeed.pollIntervalMs,
    ).toBe(2_500);
    expect(loadConfig({ ...UPSTREAMS, STATUS_CACHE_TTL_MS: '0' }).statusFeed.pollIntervalMs).toBe(
      100,
    );
    expect(
      loadConfig({ ...UPSTREAMS, STATUS_POLL_INTERVAL_MS: '30000' }).statusFeed.pollIntervalMs,
    ).toBe(30_000);
  });

  it('refuses a socket idle timeout that would cut idle subscriptions', () => {
    expect(() => loadConfig({ ...UPSTREAMS, HTTP_SOCKET_IDLE_TIMEOUT_MS: '10000' })).toThrow(
      /HTTP_SOCKET_IDLE_TIMEOUT_MS \(10000\) must exceed SUBSCRIPTION_KEEP_ALIVE_MS/,
    );
  });

  it('documents every variable with a section, a description and a default or what unset means', () => {
    expect(Object.keys(CONFIG_VARIABLES)).toContain('STATUS_BASE_URL');
    for (const [name, variable] of Object.entries(CONFIG_VARIABLES)) {
      expect(variable.description.length, name).toBeGreaterThan(10);
      const required = name === 'STATUS_BASE_URL' || name === 'VERIFY_BASE_URL';
      expect(variable.default !== undefined || variable.unset !== undefined || required, name).toBe(
        true,
      );
    }
  });

  it('turns browser conveniences off and the Secure cookie on in production, unless told', () => {
    const production = loadConfig({ ...UPSTREAMS, NODE_ENV: 'production' });
    expect(production.graphiql).toBe(false);
    expect(production.limits.introspection).toBe(false);
    expect(production.verification.sessionCookieSecure).toBe(true);
    expect(production.exposeErrorDetails).toBe(false);
    const told = loadConfig({
      ...UPSTREAMS,
      NODE_ENV: 'production',
      GRAPHIQL: 'true',
      INTROSPECTION: '1',
      SESSION_COOKIE_SECURE: 'false',
    });
    expect([told.graphiql, told.limits.introspection]).toEqual([true, true]);
    expect(told.verification.sessionCookieSecure).toBe(false);
  });

  it('gives each upstream its own timeout when set, the shared one otherwise', () => {
    const config = loadConfig({
      ...UPSTREAMS,
      UPSTREAM_TIMEOUT_MS: '700',
      VERIFY_TIMEOUT_MS: '9000',
    });
    expect(config.statusFeed.upstream.timeoutMs).toBe(700);
    expect(config.verification.upstream.timeoutMs).toBe(9_000);
  });

  it('runs GATEWAY_WORKERS workers: a whole number from 1 to 64, or auto for the cores', () => {
    expect(loadConfig({ ...UPSTREAMS, GATEWAY_WORKERS: '3' }).server.workers).toBe(3);
    expect(loadConfig({ ...UPSTREAMS, GATEWAY_WORKERS: 'auto' }).server.workers).toBe(
      Math.min(availableParallelism(), 64),
    );
    for (const value of ['0', '65', '1.5', 'all']) {
      expect(() => loadConfig({ ...UPSTREAMS, GATEWAY_WORKERS: value })).toThrow(
        /GATEWAY_WORKERS must be/,
      );
    }
  });

  it('treats empty values as unset, and is frozen', () => {
    const config = loadConfig({ ...UPSTREAMS, PORT: ' ', HOST: '' });
    expect(config.server).toEqual({
      port: 4000,
      host: undefined,
      shutdownGraceMs: 30_000,
      trustedProxies: 0,
      workers: 1,
    });
    expect(Object.isFrozen(config.statusFeed.upstream)).toBe(true);
    expect(Object.isFrozen(config.statusFeed.pages[0]?.chains)).toBe(true);
  });

  it('requires both upstreams, naming each', () => {
    expect(problemsOf({})).toEqual([
      expect.stringMatching(/^STATUS_BASE_URL is required/),
      expect.stringMatching(/^VERIFY_BASE_URL is required/),
    ]);
  });

  it('reports every problem together, each naming its variable', () => {
    expect(
      problemsOf({
        PORT: 'eighty',
        NODE_ENV: 'prod',
        STATUS_BASE_URL: 'status.hedera.com',
        VERIFY_BASE_URL: 'ftp://example.com',
        STATUS_CACHE_TTL_MS: '-5',
        UPSTREAM_TIMEOUT_MS: '1.5',
        LOG_LEVEL: 'chatty',
        SESSION_COOKIE_SECURE: 'yes',
        CORS_ORIGINS: 'app.example.com',
      }),
    ).toEqual([
      'PORT must be a whole number',
      'NODE_ENV must be one of development, production, test',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      'STATUS_BASE_URL must be an http(s) URL',
      'STATUS_CACHE_TTL_MS must be a whole number',
      'VERIFY_BASE_URL must be an http(s) URL',
      'SESSION_COOKIE_SECURE must be true or false',
      'UPSTREAM_TIMEOUT_MS must be a whole number',
      'CORS_ORIGINS must be a comma-separated list of http(s) origins',
    ]);
  });

  it('reads CORS origins as a list, with the headers tracing and GraphQL clients send allowed', () => {
    const { cors } = loadConfig({
      ...UPSTREAMS,
      CORS_ORIGINS: 'https://app.example.com, http://localhost:5173',
    });
    expect(cors?.origins).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(cors?.allowedHeaders).toEqual(
      expect.arrayContaining([
        'content-type',
        'authorization',
        'traceparent',
        'apollographql-client-name',
      ]),
    );
    expect(
      loadConfig({
        ...UPSTREAMS,
        CORS_ORIGINS: 'https://app.example.com',
        CORS_ALLOWED_HEADERS: 'Content-Type, X-Tenant',
      }).cors?.allowedHeaders,
    ).toEqual(['content-type', 'x-tenant']);
    expect(() =>
      loadConfig({ ...UPSTREAMS, CORS_ALLOWED_HEADERS: 'content-type, bad header' }),
    ).toThrow(/CORS_ALLOWED_HEADERS must be a comma-separated list of HTTP header names/);
  });

  it('shares state through Redis only with REDIS_URL, and cuts its password for logs', () => {
    expect(loadConfig(UPSTREAMS).redis).toBeUndefined();
    expect(
      loadConfig({ ...UPSTREAMS, REDIS_URL: 'redis://gateway:p%40ss@redis.internal:6380/2' }).redis,
    ).toEqual({
      url: 'redis://gateway:p%40ss@redis.internal:6380/2',
      loggedUrl: 'redis://gateway@redis.internal:6380/2',
      keyPrefix: 'ledger-status-gateway:',
      commandTimeoutMs: 500,
    });
    expect(
      loadConfig({ ...UPSTREAMS, REDIS_URL: 'rediss://:secret@redis.internal' }).redis?.loggedUrl,
    ).toBe('rediss://redis.internal');
    expect(
      problemsOf({
        ...UPSTREAMS,
        REDIS_URL: 'http://redis.internal',
        REDIS_KEY_PREFIX: 'a prefix with spaces',
        REDIS_COMMAND_TIMEOUT_MS: '0',
      }),
    ).toEqual([
      'REDIS_URL must be a redis:// or rediss:// URL',
      'REDIS_KEY_PREFIX must be 1 to 64 letters, digits, `_`, `.`, `:` or `-`',
      'REDIS_COMMAND_TIMEOUT_MS must be at least 1',
    ]);
  });

  it('serves /metrics on its own port only when it differs from PORT', () => {
    expect(loadConfig({ ...UPSTREAMS, METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    expect(loadConfig({ ...UPSTREAMS, PORT: '9464', METRICS_PORT: '9464' }).metricsPort).toBe(
      undefined,
    );
  });

  it('traces only when an OTLP endpoint is set, from the standard OTEL_* variables', () => {
    expect(loadConfig(UPSTREAMS).tracing).toBeUndefined();
    expect(
      loadConfig({
        ...UPSTREAMS,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20t0ken,x-scope=ops',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      }).tracing,
    ).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      headers: { authorization: 'Bearer t0ken', 'x-scope': 'ops' },
      serviceName: 'ledger-status-gateway',
      sampler: { parentBased: true, ratio: 0.25 },
      exportDelayMs: 5_000,
    });
    expect(
      loadConfig({
        ...UPSTREAMS,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
        OTEL_TRACES_SAMPLER: 'always_off',
      }).tracing,
    ).toMatchObject({
      tracesUrl: 'http://traces:4318/custom',
      sampler: { parentBased: false, ratio: 0 },
    });
    expect(
      loadConfig({
        ...UPSTREAMS,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_SDK_DISABLED: 'true',
      }).tracing,
    ).toBeUndefined();
    expect(() => loadConfig({ ...UPSTREAMS, OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(
      /OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/,
    );
  });

  it('refuses an out-of-range port and a feed URL that is not the v2 API', () => {
    expect(problemsOf({ ...UPSTREAMS, PORT: '70000' })).toEqual(['PORT must be at most 65535']);
    expect(problemsOf({ ...UPSTREAMS, STATUS_BASE_URL: 'https://status.example.com' })).toEqual([
      'STATUS_BASE_URL must end in /api/v2',
    ]);
  });

  it('refuses an execution limit a verification could outlast', () => {
    expect(problemsOf({ ...UPSTREAMS, MAX_EXECUTION_MS: '20000' })).toEqual([
      'MAX_EXECUTION_MS (20000) must exceed VERIFY_WAIT_MS (20000): a verifyContract may wait that long',
    ]);
  });

  it('checks a rule between variables only when each of them was read', () => {
    expect(problemsOf({ ...UPSTREAMS, MAX_EXECUTION_MS: '0', VERIFY_WAIT_MS: 'soon' })).toEqual([
      'VERIFY_WAIT_MS must be a whole number',
      'MAX_EXECUTION_MS must be at least 1',
    ]);
    expect(
      problemsOf({ ...UPSTREAMS, HTTP_MAX_CONNECTIONS: '100', MAX_SSE_SUBSCRIPTIONS: '100' }),
    ).toEqual([
      'MAX_SSE_SUBSCRIPTIONS (100) must be below HTTP_MAX_CONNECTIONS (100): SSE streams would leave no connection for /health and HTTP',
    ]);
  });

  it('lists every variable once in docs/configuration.md, in its section', () => {
    const doc = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    const rows: string[] = [];
    let section = '';
    for (const line of doc.split('\n')) {
      if (line.startsWith('## ')) section = line.slice(3);
      const name = /^\| `([A-Z0-9_]+)` \|/.exec(line)?.[1];
      if (name !== undefined) rows.push(`${section}: ${name}`);
    }
    expect(rows).toEqual(
      Object.entries(CONFIG_VARIABLES).map(([name, variable]) => `${variable.section}: ${name}`),
    );
    expect(new Set(rows).size).toBe(rows.length);
  });

  describe('STATUS_PAGES_FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pages-config-'));
    const fileOf = (name: string, text: string) => {
      const file = join(dir, name);
      writeFileSync(file, text);
      return file;
    };
    const VERIFY = { VERIFY_BASE_URL: UPSTREAMS.VERIFY_BASE_URL };

    it('reads the pages of a YAML file in order, with their chains and version pattern', () => {
      const file = fileOf(
        'hedera.yaml',
        [
          'pages:',
          '  - slug: hedera',
          '    name: Hedera',
          '    baseUrl: https://status.hedera.com/api/v2',
          "    versionPattern: '\\((v[0-9.]+)\\)'",
          '    chains:',
          '      - { chainId: 295, components: [abc123] }',
          '      - { chainId: "296", components: [def456] }',
          '  - slug: github',
          '    baseUrl: https://www.githubstatus.com/api/v2/',
        ].join('\n'),
      );
      const { pages } = loadConfig({ ...VERIFY, STATUS_PAGES_FILE: file }).statusFeed;
      expect(pages.map((page) => page.slug)).toEqual(['hedera', 'github']);
      expect(pages[0]?.chains).toEqual([
        { chainId: '295', components: ['abc123'] },
        { chainId: '296', components: ['def456'] },
      ]);
      expect(pages[0]?.versionPattern?.exec('Mainnet (v0.58.10) | Network Uptime')?.[1]).toBe(
        'v0.58.10',
      );
      expect(pages[1]?.baseUrl).toBe('https://www.githubstatus.com/api/v2');
    });

    it("reads a page's provider, and checks its baseUrl against that provider's", () => {
      const file = fileOf(
        'providers.json',
        JSON.stringify({
          pages: [
            { slug: 'a', provider: 'statuspage-v2', baseUrl: 'https://a.example.com/api/v2' },
            { slug: 'b', baseUrl: 'https://b.example.com/api/v2' },
          ],
        }),
      );
      const { pages } = loadConfig({ ...VERIFY, STATUS_PAGES_FILE: file }).statusFeed;
      expect(pages.map(({ provider }) => provider)).toEqual(['statuspage-v2', undefined]);
      const unknown = fileOf(
        'unknown-provider.json',
        JSON.stringify({
          pages: [
            { slug: 'a', provider: 'rss', baseUrl: 'https://a.example.com/api/v2' },
            { slug: 'b', provider: 'statuspage-v2', baseUrl: 'https://b.example.com/feed' },
          ],
        }),
      );
      expect(problemsOf({ ...VERIFY, STATUS_PAGES_FILE: unknown })).toEqual([
        'STATUS_PAGES_FILE pages[0].provider must be one of statuspage-v2',
        'STATUS_PAGES_FILE pages[1].baseUrl must end in /api/v2',
      ]);
    });

    it('reports every problem of the file together, each with its path', () => {
      const file = fileOf(
        'bad.json',
        JSON.stringify({
          pages: [
            { slug: 'Hedera!', baseUrl: 'https://status.hedera.com' },
            { slug: 'a', baseUrl: 'https://a.example.com/api/v2', versionPattern: 'v[0-9]+' },
            {
              slug: 'a',
              baseUrl: 'https://b.example.com/api/v2',
              chains: [{ chainId: 'x', components: [] }],
            },
          ],
        }),
      );
      expect(problemsOf({ ...VERIFY, STATUS_PAGES_FILE: file })).toEqual([
        expect.stringMatching(/^STATUS_PAGES_FILE pages\[0\]\.slug must be 1 to 63 lowercase/),
        'STATUS_PAGES_FILE pages[0].baseUrl must end in /api/v2',
        'STATUS_PAGES_FILE pages[1].versionPattern must have a capture group: the version',
        'STATUS_PAGES_FILE pages[2].chains[0].chainId must be a decimal chain id',
      ]);
      const repeated = fileOf(
        'repeated.yaml',
        'pages:\n  - { slug: a, baseUrl: "https://a.example.com/api/v2" }\n  - { slug: a, baseUrl: "https://b.example.com/api/v2" }\n',
      );
      expect(problemsOf({ ...VERIFY, STATUS_PAGES_FILE: repeated })).toEqual([
        'STATUS_PAGES_FILE pages[1].slug is a repeat',
      ]);
    });

    it('reports its problems with those of every section and of the rules between them', () => {
      const file = fileOf('no-v2.yaml', 'pages: [{ slug: a, baseUrl: "https://a.example.com" }]');
      expect(
        problemsOf({
          PORT: 'eighty',
          STATUS_PAGES_FILE: file,
          VERIFY_WAIT_MS: '40000',
          SUBSCRIPTION_KEEP_ALIVE_MS: '70000',
          MAX_WEBSOCKETS: '1000',
          REDIS_URL: 'http://redis.internal',
        }),
      ).toEqual([
        'PORT must be a whole number',
        'HTTP_SOCKET_IDLE_TIMEOUT_MS (60000) must exceed SUBSCRIPTION_KEEP_ALIVE_MS (70000) and the 12000 ms between SSE keep-alive lines: idle subscriptions would be cut',
        'STATUS_PAGES_FILE pages[0].baseUrl must end in /api/v2',
        "VERIFY_BASE_URL is required: the verification service's URL (`npm start` simulates it outside production)",
        'MAX_EXECUTION_MS (30000) must exceed VERIFY_WAIT_MS (40000): a verifyContract may wait that long',
        'MAX_WEBSOCKETS (1000) must be below HTTP_MAX_CONNECTIONS (1000): WebSockets would leave no connection for /health and HTTP',
        'REDIS_URL must be a redis:// or rediss:// URL',
      ]);
    });

    it("says what is wrong in the file's terms: keys unknown or missing, sizes, types", () => {
      const file = fileOf(
        'terms.yaml',
        [
          'pages:',
          '  - slug: a',
          '    baseURL: https://a.example.com/api/v2',
          '    tags: [t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, t16, t17, t18, t19, t20, t21]',
          '    chain: []',
          '  - slug: b',
          '    name: ""',
          '    colour: red',
          '  - slug: c',
          '    baseUrl: https://c.example.com/api/v2',
          '    chains: { chainId: 1 }',
        ].join('\n'),
      );
      expect(problemsOf({ ...VERIFY, STATUS_PAGES_FILE: file })).toEqual([
        'STATUS_PAGES_FILE pages[0].tags must have at most 20 items',
        'STATUS_PAGES_FILE pages[0] has unknown key baseURL: did you mean baseUrl?',
        'STATUS_PAGES_FILE pages[0] has unknown key chain: did you mean chains?',
        'STATUS_PAGES_FILE pages[1].baseUrl is missing',
        'STATUS_PAGES_FILE pages[1].name must have at least 1 character',
        expect.stringMatching(
          /^STATUS_PAGES_FILE pages\[1\] has unknown key colour: the keys are slug, (\w+, )*baseUrl, (\w+, )*pollIntervalMs$/,
        ),
        'STATUS_PAGES_FILE pages[2].chains must be a list',
      ]);
      expect(problemsOf({ ...VERIFY, STATUS_PAGES_FILE: fileOf('page.yaml', 'page: []') })).toEqual(
        ['STATUS_PAGES_FILE has unknown key page: did you mean pages?'],
      );
    });

    it('refuses a file that cannot be read, and both ways of naming pages at once', () => {
      expect(problemsOf({ ...VERIFY, STATUS_PAGES_FILE: join(dir, 'missing.yaml') })).toEqual([
        expect.stringMatching(/^STATUS_PAGES_FILE .*missing\.yaml cannot be read: ENOENT/),
      ]);
      const file = fileOf(
        'one.yaml',
        'pages: [{ slug: a, baseUrl: "https://a.example.com/api/v2" }]',
      );
      expect(problemsOf({ ...UPSTREAMS, STATUS_PAGES_FILE: file })).toEqual([
        expect.stringMatching(/^STATUS_BASE_URL and STATUS_PAGES_FILE are both set/),
      ]);
    });
  });
});
