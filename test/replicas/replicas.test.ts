/**
 * Several replicas of the gateway, each a process of its own running the production entry, against
 * one simulator and one real redis-server: what they share, and what each does alone while Redis
 * is gone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../simulator/src/server.js';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { eventually } from '../helpers/eventually.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway-process.js';
import {
  REDIS_INSTALL_TIMEOUT_MS,
  type RedisServer,
  startRedisServer,
} from '../helpers/redis-server.js';
import { steadyLoad } from '../helpers/steady-load.js';

const PASSWORD = 's3cret-Redis-pass';
const TTL_MS = 1_000;
const RATE_LIMIT = 3;
const SUMMARY = '/status/api/v2/summary.json';

const PAGE = '{ statusPage { name components { id status } } }';
const STATUS_OF = 'query ($id: ID!) { component(id: $id) { id status } }';
const VERIFY = `mutation ($input: VerifyContractInput!) {
  verifyContract(input: $input) { __typename ... on RateLimitedError { retryAfterSeconds } }
}`;
const [contract] = VERIFIABLE_CONTRACTS;
const verifyInput = { input: { address: contract?.address, chainId: contract?.chainId } };

let redis: RedisServer;
let simulator: Simulator;
let replicas: GatewayProcess[] = [];

function replicaEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'production',
    STATUS_BASE_URL: simulator.statusBaseUrl,
    VERIFY_BASE_URL: simulator.verifyBaseUrl,
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: 'replicas-test:',
    // A busy test machine must not pass for a hung Redis: the fallbacks are tested on their own.
    REDIS_COMMAND_TIMEOUT_MS: '2000',
    STATUS_CACHE_TTL_MS: String(TTL_MS),
    VERIFY_RATE_LIMIT: String(RATE_LIMIT),
    UPSTREAM_RETRY_DELAY_MS: '5',
    ...overrides,
  };
}

const until = <Value>(probe: () => Promise<Value>, timeoutMs = 10_000) =>
  eventually(probe, { timeoutMs, intervalMs: 50 });

/** Starts one verification on each replica in turn; the answers' type names. */
async function verifyOn(order: readonly GatewayProcess[]) {
  const answers: { __typename: string; retryAfterSeconds?: number }[] = [];
  for (const replica of order) {
    const { body } = await replica.execute<{
      verifyContract: { __typename: string; retryAfterSeconds?: number };
    }>(VERIFY, verifyInput);
    answers.push(body.data?.verifyContract ?? { __typename: 'none' });
  }
  return answers;
}

const CONNECTED = 'redis connected: this replica shares state with the others';
const ALONE = 'redis unavailable: this replica works alone until it is back';

/**
 * The lines logged with `message`, once there are `count` of them: the log is written in 4 KiB
 * batches, so a line shows once later lines (each request's) have pushed it out.
 */
async function loggedLines(replica: GatewayProcess, message: string, count: number) {
  await until(async () => {
    if (replica.logged(message).length >= count) return true;
    await replica.execute('{ __typename }');
    return undefined;
  });
  return replica.logged(message);
}

const redisState = async (replica: GatewayProcess) => (await replica.readiness()).redis?.state;

/** Resolves once every replica's readiness reports Redis `state`. */
const reported = (state: string) =>
  Promise.all(
    replicas
      .slice(0, 2)
      .map((replica) =>
        until(async () => ((await redisState(replica)) === state ? true : undefined)),
      ),
  );

/** Ms between successive requests of `path` the simulator received. */
function gapsBetween(path: string): number[] {
  const times = simulator.requests
    .filter((request) => request.path === path)
    .map((request) => request.time.getTime());
  return times.slice(1).map((time, i) => time - (times[i] ?? 0));
}

beforeAll(async () => {
  redis = await startRedisServer({ password: PASSWORD });
  simulator = await startSimulator();
  replicas = await Promise.all(['A', 'B'].map((name) => startGatewayProcess(name, replicaEnv())));
  for (const replica of replicas) {
    await until(async () => ((await redisState(replica)) === 'connected' ? true : undefined));
  }
}, REDIS_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.stop()));
  await simulator?.close();
  await redis?.stop();
});

describe('replicas sharing one Redis', () => {
  it('ask the upstream for the summary once per TTL across both, under load', async () => {
    const [a, b] = replicas as [GatewayProcess, GatewayProcess];
    const loadMs = 6 * TTL_MS;
    simulator.resetRequests();
    const started = Date.now();
    // Four clients per replica: half repeat one operation (response-cache hits), half send a
    // new one each time (every one read through the snapshot cache).
    const answers = await steadyLoad({ clients: 8, forMs: loadMs }, async (client, n) => {
      const replica = client % 2 === 0 ? a : b;
      const distinct = client % 4 < 2;
      const query = distinct ? `{ statusPage { name } n${n}: __typename }` : PAGE;
      const { status, body } = await replica.execute(query);
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
    });
    const elapsed = Date.now() - started;
    const summaries = simulator.requestCount(SUMMARY);
    // One per TTL, whichever replica asked: a summary is fetched again only once the one before
    // has run its TTL, and that one was asked for before it was fetched; two replicas each alone
    // would each fetch within the other's TTL. However slow the machine, never closer.
    expect(Math.min(...gapsBetween(SUMMARY))).toBeGreaterThanOrEqual(TTL_MS);
    // …and the feed is refreshed all along (a refetch starts with the first read past the TTL).
    expect(summaries).toBeGreaterThanOrEqual(3);
    expect(answers).toBeGreaterThan(100);
    // Both replicas read the same snapshots: the upstream requests each made add up to the count
    // (answered in full, or 304 when the summary had not changed).
    const fetched = await Promise.all(
      [a, b].map(async (replica) => {
        let requests = 0;
        for (const status of ['200', '304']) {
          requests +=
            (await replica.metric(
              `upstream_request_duration_seconds_count{upstream="status_feed",method="GET",endpoint="/summary.json",status="${status}"}`,
            )) ?? 0;
        }
        return requests;
      }),
    );
    expect((fetched[0] ?? 0) + (fetched[1] ?? 0)).toBeGreaterThanOrEqual(summaries);
    console.info(
      `${answers} answers in ${elapsed} ms over two replicas (TTL ${TTL_MS} ms): ${summaries} summary requests upstream (A fetched ${fetched[0] ?? 0}, B ${fetched[1] ?? 0})`,
    );
  });

  it('share the verifyContract allowance of a client', async () => {
    const [a, b] = replicas as [GatewayProcess, GatewayProcess];
    const received = simulator.verification.received.length;
    const answers = await verifyOn([a, b, a, b, a]);
    const types = answers.map(({ __typename }) => __typename);
    expect(types.slice(0, RATE_LIMIT)).not.toContain('RateLimitedError');
    expect(types.slice(RATE_LIMIT)).toEqual(['RateLimitedError', 'RateLimitedError']);
    for (const { retryAfterSeconds } of answers.slice(RATE_LIMIT)) {
      expect(retryAfterSeconds).toBeGreaterThan(0);
      expect(retryAfterSeconds).toBeLessThanOrEqual(60);
    }
    expect(simulator.verification.received.length - received).toBe(RATE_LIMIT);
  });

  it('stop serving a cached answer on one replica once another has refreshed the snapshot', async () => {
    const [a] = replicas as [GatewayProcess];
    // A replica whose TTL is a minute (a rolling deploy that changes STATUS_CACHE_TTL_MS): only
    // the notice from the replica that refreshed can tell it its answers are out of date.
    const slow = await startGatewayProcess('C', replicaEnv({ STATUS_CACHE_TTL_MS: '60000' }));
    replicas.push(slow);
    await until(async () => ((await redisState(slow)) === 'connected' ? true : undefined));
    const id = simulator.statusFeed.summary.components.find((component) => !component.group)?.id;
    const statusOn = async (replica: GatewayProcess) =>
      (await replica.execute<{ component: { status: string } }>(STATUS_OF, { id })).body.data
        ?.component.status;

    const before = await statusOn(slow);
    expect(await statusOn(slow)).toBe(before);
    const hits = async () =>
      (await slow.metric('response_cache_reads_total{result="hit"}')) ?? Number.NaN;
    const hitsBefore = await hits();
    expect(await statusOn(slow)).toBe(before);
    expect(await hits()).toBe(hitsBefore + 1);

    simulator.updateStatusFeed((feed) => {
      const component = feed.summary.components.find((candidate) => candidate.id === id);
      if (component) component.status = 'major_outage';
    });
    // A refreshes once its TTL has run.
    await until(async () => ((await statusOn(a)) === 'MAJOR_OUTAGE' ? true : undefined));
    // C's answer is rebuilt from the new snapshot at once, fifty-odd seconds before its TTL.
    const seen = await until(async () => {
      const status = await statusOn(slow);
      return status === 'MAJOR_OUTAGE' ? status : undefined;
    }, 2_000);
    expect(seen).toBe('MAJOR_OUTAGE');
  });

  it('each work alone while Redis is down, say so once, and rejoin when it is back', async () => {
    const [a, b] = replicas as [GatewayProcess, GatewayProcess];
    /**
     * What both replicas say: in readiness (still ready), in metrics, and in their logs, one line
     * per change of state (`changes` so far of each kind), never one per request.
     */
    const expectBoth = async (state: string, changes: { connected: number; alone: number }) => {
      for (const replica of [a, b]) {
        const readiness = await replica.readiness();
        expect(readiness.ready).toBe(true);
        expect(readiness.redis?.state).toBe(state);
        expect(await replica.metric('redis_connected')).toBe(state === 'connected' ? 1 : 0);
        expect(await loggedLines(replica, CONNECTED, changes.connected)).toHaveLength(
          changes.connected,
        );
        expect(await loggedLines(replica, ALONE, changes.alone)).toHaveLength(changes.alone);
      }
    };
    await expectBoth('connected', { connected: 1, alone: 0 });

    await redis.kill();
    await reported('unavailable');

    // They answer alone: the page, and verifications counted per replica.
    for (let i = 0; i < 10; i += 1) {
      for (const replica of [a, b]) {
        const { status, body } = await replica.execute(PAGE);
        expect(status).toBe(200);
        expect(body.errors).toBeUndefined();
      }
    }
    const [verified] = await verifyOn([b]);
    expect(verified?.__typename).not.toBe('RateLimitedError');
    await expectBoth('unavailable', { connected: 1, alone: 1 });

    await redis.restart();
    await reported('connected');
    await expectBoth('connected', { connected: 2, alone: 1 });
    // Sharing again: the restarted Redis is empty, and the allowance is counted across both.
    const answers = await verifyOn([a, b, a, b]);
    expect(answers.slice(RATE_LIMIT).map(({ __typename }) => __typename)).toEqual([
      'RateLimitedError',
    ]);
  });

  it('never write the Redis password in their logs', () => {
    expect(replicas.length).toBeGreaterThanOrEqual(2);
    for (const replica of replicas) {
      const started = replica.logs.find((line) => 'redis' in line && 'url' in line);
      expect(started?.redis).toBe(`redis://127.0.0.1:${redis.port}`);
      for (const line of replica.rawLogs) expect(line).not.toContain(PASSWORD);
    }
  });
});
