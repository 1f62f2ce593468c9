/**
 * What ships is what is tested: the Dockerfile's runtime stage replayed in a clean directory
 * (bench/lib/production-install.ts: its `npm ci` flags, offline from the npm cache; `dist/` built
 * from src/ as its build stage does; its COPY and ENV lines), and its CMD started from there,
 * against the simulator, with a STATUS_PAGES_FILE of three pages and a real redis-server.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  LOOPBACK,
  type ManagedProcess,
  postGraphql,
  ROOT,
  waitForHttp,
} from '../../bench/lib/processes.js';
import {
  installProduction,
  type ProductionInstall,
  spawnProductionCommand,
} from '../../bench/lib/production-install.js';
import { type Simulator, startSimulator } from '../../simulator/src/server.js';
import { fixtureContract } from '../../simulator/src/verification/fixture.js';
import { eventually } from '../helpers/eventually.js';
import {
  REDIS_INSTALL_TIMEOUT_MS,
  type RedisServer,
  startRedisServer,
} from '../helpers/redis-server.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';

/** The simulator's own pages: the ledger demo (the default page), and its two vendor pages. */
const SLUGS = ['ledger', 'cloud', 'ai-vendor'] as const;
const GREETER = fixtureContract('Greeter');

interface FeedSummary {
  status: { indicator: string };
  components: { id: string; name: string; status: string }[];
}

let install: ProductionInstall | undefined;
let redis: RedisServer | undefined;
let simulator: Simulator;
let gateway: ManagedProcess;
const lines: string[] = [];

const pageUrl = (slug: string) =>
  slug === 'ledger' ? simulator.statusBaseUrl : simulator.statusPageUrl(slug);

/** What the simulator itself serves as a page's summary: what the gateway must answer. */
async function summaryOf(slug: string): Promise<FeedSummary> {
  const response = await fetch(`${pageUrl(slug)}/summary.json`);
  return (await response.json()) as FeedSummary;
}

/** Components by id: which ones, not their order (the graph orders them by position). */
const byId = <T extends { id: string }>(components: readonly T[] = []) =>
  components.toSorted((a, b) => a.id.localeCompare(b.id));

async function execute<Data>(query: string, variables?: Record<string, unknown>) {
  const answer = await postGraphql(
    `${gateway.origin}/graphql`,
    JSON.stringify({ query, variables }),
  );
  return { status: answer.status, ...(answer.json as { data?: Data; errors?: unknown[] }) };
}

beforeAll(async () => {
  const started = performance.now();
  [install, redis, simulator] = await Promise.all([
    installProduction(),
    startRedisServer(),
    startSimulator(),
  ]);
  const port = await freePort();
  gateway = spawnProductionCommand(install, {
    name: 'production',
    port,
    env: {
      PORT: String(port),
      HOST: LOOPBACK,
      STATUS_PAGES_FILE: statusPagesFile(SLUGS.map((slug) => ({ slug, baseUrl: pageUrl(slug) }))),
      VERIFY_BASE_URL: simulator.verifyBaseUrl,
      REDIS_URL: redis.url,
    },
    onLine: (line) => lines.push(line),
  });
  await waitForHttp(gateway, '/health', 60_000);
  const { buildMs, installMs, totalMs } = install.timings;
  console.info(
    `production install: build stage ${Math.round(buildMs)} ms and npm ci ${Math.round(installMs)} ms at once, ${Math.round(totalMs)} ms; answering ${Math.round(performance.now() - started)} ms after the start`,
  );
}, REDIS_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await gateway?.stop();
  await simulator?.close();
  await redis?.stop();
  install?.dispose();
});

describe("the Dockerfile's production install", () => {
  it('holds production dependencies only: yaml, and no package the lockfile has for development', () => {
    const directory = install?.directory ?? '';
    const { packages } = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
    };
    const installed = installedPackages(join(directory, 'node_modules'), 'node_modules');
    expect(installed).toContain('node_modules/yaml');
    for (const name of ['vitest', 'tsx', 'typescript', 'node', 'esbuild', '@biomejs/biome']) {
      expect(installed).not.toContain(`node_modules/${name}`);
    }
    for (const path of installed) {
      const entry = packages[path];
      expect(entry, `${path} is not in package-lock.json`).toBeDefined();
      expect(entry?.dev || entry?.devOptional, `${path} is a development package`).toBeFalsy();
    }
    // And what runs is what was built from src/ here, not the checkout's dist/.
    expect(readdirSync(join(directory, 'dist'))).toContain('main.js');
    expect(install?.env.NODE_ENV).toBe('production');
  });

  it('answers /health, and reaches the redis-server', async () => {
    const health = await fetch(`${gateway.origin}/health`);
    expect(health.status).toBe(200);
    await eventually(
      async () => {
        const readiness = (await (await fetch(`${gateway.origin}/readiness`)).json()) as {
          redis?: { state: string };
        };
        return readiness.redis?.state === 'connected';
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
  });

  it("answers a query of the default page with the feed's status", async () => {
    const answer = await execute<{ statusPage: { slug: string; status: { indicator: string } } }>(
      '{ statusPage { slug status { indicator } } }',
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.statusPage).toEqual({
      slug: 'ledger',
      status: { indicator: (await summaryOf('ledger')).status.indicator.toUpperCase() },
    });
  });

  it("answers pages by slug with each page's own components", async () => {
    const one = await execute<{ statusPage: { components: { id: string; name: string }[] } }>(
      '{ statusPage(slug: "cloud") { components { id name } } }',
    );
    expect(one.errors).toBeUndefined();
    const cloud = await summaryOf('cloud');
    expect(cloud.components.length).toBeGreaterThan(0);
    expect(byId(one.data?.statusPage.components)).toEqual(
      byId(cloud.components.map(({ id, name }) => ({ id, name }))),
    );

    const several = await execute<{
      statusPages: { slug: string; components: { id: string; status: string }[] }[];
    }>(
      'query ($slugs: [String!]) { statusPages(slugs: $slugs) { slug components { id status } } }',
      { slugs: ['ai-vendor', 'ledger'] },
    );
    expect(several.errors).toBeUndefined();
    // In configuration order, each with the components its own feed lists.
    const expected = await Promise.all(
      ['ledger', 'ai-vendor'].map(async (slug) => ({
        slug,
        components: byId(
          (await summaryOf(slug)).components.map(({ id, status }) => ({
            id,
            status: status.toUpperCase(),
          })),
        ),
      })),
    );
    expect(
      several.data?.statusPages.map((page) => ({ ...page, components: byId(page.components) })),
    ).toEqual(expected);
    expect(new Set(expected.flatMap((page) => page.components.map(({ id }) => id))).size).toBe(
      expected.reduce((count, page) => count + page.components.length, 0),
    );
  });

  it('verifies a contract through the verification service', async () => {
    const answer = await execute<{
      verifyContract: {
        __typename: string;
        contracts?: { address: string; chainId: string; status: string; name: string | null }[];
      };
    }>(
      `mutation ($input: VerifyContractInput!) {
        verifyContract(input: $input) {
          __typename
          ... on VerificationResult { contracts { address chainId status name } }
        }
      }`,
      { input: { address: GREETER.address, chainId: GREETER.chainId } },
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.verifyContract).toEqual({
      __typename: 'VerificationResult',
      contracts: [
        {
          address: GREETER.address,
          chainId: GREETER.chainId,
          status: 'PERFECT',
          name: GREETER.name,
        },
      ],
    });
    expect(simulator.verification.received).toEqual([
      expect.objectContaining({ address: GREETER.address }),
    ]);
  });

  it('logged no error, and exits 0 on SIGTERM', async () => {
    await gateway.stop(10_000);
    expect(await gateway.exited).toBe('0');
    // Every line is a log line (no stack trace, no warning of Node's own), none at error or above.
    const logged = lines.map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(logged.filter((line) => line.level >= 50)).toEqual([]);
    expect(logged.map((line) => line.msg)).toContain('stopped');
  });
});

/** The packages installed under `directory` (a node_modules), nested ones too, as lockfile paths. */
function installedPackages(directory: string, path: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const names = entry.name.startsWith('@')
      ? readdirSync(join(directory, entry.name)).map((name) => `${entry.name}/${name}`)
      : [entry.name];
    for (const name of names) {
      found.push(`${path}/${name}`);
      const nested = join(directory, name, 'node_modules');
      if (existsSync(nested)) {
        found.push(...installedPackages(nested, `${path}/${name}/node_modules`));
      }
    }
  }
  return found;
}
