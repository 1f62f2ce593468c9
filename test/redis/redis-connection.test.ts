/**
 * The replicas' connection to a real redis-server that disappears, hangs or refuses the password:
 * bounded waits, one log line per change of state, never the password.
 */
import { describe, expect, it } from 'vitest';
import { isRedisUnavailable } from '../../src/errors/redis-unavailable-error.js';
import { createLogger } from '../../src/observability/logger.js';
import { RedisConnection } from '../../src/redis/redis-connection.js';
import { eventually, sleep } from '../helpers/eventually.js';
import { type TestConnection, useRedisServer } from '../helpers/redis-server.js';

const PASSWORD = 'hunter2-redis-password';
/** Long enough that a command which waited for it is told apart from one that failed at once. */
const COMMAND_TIMEOUT_MS = 1_000;
const CONNECTED = 'redis connected: this replica shares state with the others';
const ALONE = 'redis unavailable: this replica works alone until it is back';

const redisServer = useRedisServer({ password: PASSWORD });

async function connect(): Promise<TestConnection> {
  const [connection] = await redisServer.replicas(1, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
  if (!connection) throw new Error('one connection');
  return connection;
}

const messages = ({ logs }: TestConnection) => logs.map((line) => line.msg);

/** How long a command takes to fail, and whether it failed as Redis being unavailable. */
async function failure(command: Promise<unknown>) {
  const started = performance.now();
  const error = await command.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  return { unavailable: isRedisUnavailable(error), ms: performance.now() - started };
}

describe('RedisConnection', () => {
  it('gives up on a hung Redis within the command timeout, works alone, and rejoins', async () => {
    const connection = await connect();
    const { redis } = connection;
    redisServer.server.pause();
    const hung = await failure(redis.run((client) => client.ping()));
    expect(hung.unavailable).toBe(true);
    expect(hung.ms).toBeLessThan(3 * COMMAND_TIMEOUT_MS);
    expect(redis.state).toBe('unavailable');
    // While it is hung, commands fail at once instead of each waiting out the timeout.
    for (let i = 0; i < 5; i += 1) {
      const next = await failure(redis.run((client) => client.ping()));
      expect(next.unavailable).toBe(true);
      expect(next.ms).toBeLessThan(COMMAND_TIMEOUT_MS / 2);
    }
    expect(messages(connection).filter((msg) => msg === ALONE)).toHaveLength(1);
    redisServer.server.resume();
    await eventually(() => redis.connected);
    expect(await redis.run((client) => client.ping())).toBe('PONG');
    expect(messages(connection).filter((msg) => msg === CONNECTED)).toHaveLength(2);
  });

  it('starts alone when Redis is unreachable, never waits for it, and joins once it is up', async () => {
    await redisServer.server.kill();
    const logs: Record<string, unknown>[] = [];
    const redis = new RedisConnection({
      url: redisServer.server.url,
      loggedUrl: `redis://127.0.0.1:${redisServer.server.port}`,
      keyPrefix: 'test:',
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      retryMs: 100,
      logger: createLogger('debug', {
        write: (line: string) => {
          logs.push(JSON.parse(line) as Record<string, unknown>);
        },
      }),
    });
    try {
      await eventually(() => redis.state === 'unavailable');
      const refused = await failure(redis.run((client) => client.ping()));
      expect(refused.unavailable).toBe(true);
      expect(refused.ms).toBeLessThan(COMMAND_TIMEOUT_MS / 2);
      await sleep(500);
      expect(logs.filter((line) => line.msg === ALONE)).toHaveLength(1);
      await redisServer.server.restart();
      await eventually(() => redis.connected);
      expect(logs.map((line) => line.msg)).toEqual([ALONE, CONNECTED]);
      expect(logs[0]).toMatchObject({ redis: `redis://127.0.0.1:${redisServer.server.port}` });
    } finally {
      await redis.close();
    }
  });

  it('never logs the password, not even when Redis refuses it', async () => {
    const logs: string[] = [];
    const wrong = 'wrong-redis-password';
    const url = redisServer.server.url.replace(encodeURIComponent(PASSWORD), wrong);
    const redis = new RedisConnection({
      url,
      loggedUrl: `redis://127.0.0.1:${redisServer.server.port}`,
      keyPrefix: 'test:',
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      retryMs: 100,
      logger: createLogger('debug', { write: (line: string) => void logs.push(line) }),
    });
    try {
      await eventually(() => redis.state === 'unavailable');
      await sleep(300);
      expect(logs.length).toBeGreaterThan(0);
      for (const line of logs) {
        expect(line).not.toContain(wrong);
        expect(line).not.toContain(PASSWORD);
      }
    } finally {
      await redis.close();
    }
    const connection = await connect();
    await connection.redis.close();
    for (const line of connection.logs) expect(JSON.stringify(line)).not.toContain(PASSWORD);
  });
});
