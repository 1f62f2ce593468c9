/**
 * The replicas' connection to a real redis-server that disappears, hangs or refuses the password:
 * bounded waits, one log line per change of state, never the password.
 */
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisUnavailableError } from '../../src/errors/redis-unavailable-error.js';
import { createLogger } from '../../src/observability/logger.js';
import { RedisConnection } from '../../src/redis/redis-connection.js';
import { eventually } from '../helpers/eventually.js';
import { type TestConnection, useRedisServer } from '../helpers/redis-server.js';

const PASSWORD = 'hunter2-redis-password';
const COMMAND_TIMEOUT_MS = 200;
const CONNECTED = 'redis connected: this replica shares state with the others';
const ALONE = 'redis unavailable: this replica works alone until it is back';

const redisServer = useRedisServer({ password: PASSWORD });

async function connect(): Promise<TestConnection> {
  const [connection] = await redisServer.replicas(1, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
  if (!connection) throw new Error('one connection');
  return connection;
}

const messages = ({ logs }: TestConnection) => logs.map((line) => line.msg);

/** Whether a command failed as Redis being unavailable, and its message. */
async function failure(command: Promise<unknown>) {
  const error = await command.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  return { unavailable: error instanceof RedisUnavailableError, message: (error as Error).message };
}

/** What a command gets when it is refused before it is sent: nothing waits for Redis. */
const REFUSED_AT_ONCE = 'redis is unavailable';

describe('RedisConnection', () => {
  it('gives up on a hung Redis within the command timeout, works alone, and rejoins', async () => {
    const connection = await connect();
    const { redis } = connection;
    redisServer.server.pause();
    const hung = await failure(redis.run((client) => client.ping()));
    expect(hung).toEqual({ unavailable: true, message: 'redis: Command timed out' });
    expect(redis.state).toBe('unavailable');
    // While it is hung, commands fail at once, never sent, instead of each waiting out the timeout.
    for (let i = 0; i < 5; i += 1) {
      const next = await failure(redis.run((client) => client.ping()));
      expect(next).toEqual({ unavailable: true, message: REFUSED_AT_ONCE });
    }
    expect(messages(connection).filter((msg) => msg === ALONE)).toHaveLength(1);
    redisServer.server.resume();
    await eventually(() => redis.connected);
    expect(await redis.run((client) => client.ping())).toBe('PONG');
    expect(messages(connection).filter((msg) => msg === CONNECTED)).toHaveLength(2);
  });

  it('starts alone when Redis is unreachable, never waits for it, and joins once it is up', async () => {
    await redisServer.server.kill();
    // In its place, a port that takes connections and drops them: each attempt to reconnect shows.
    let attempts = 0;
    const dropping = createServer((socket) => {
      attempts += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) =>
      dropping.listen(redisServer.server.port, '127.0.0.1', resolve),
    );
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
      expect(refused).toEqual({ unavailable: true, message: REFUSED_AT_ONCE });
      // Several attempts to reconnect, and still the one line.
      const seen = attempts;
      await eventually(() => attempts >= seen + 4);
      expect(logs.filter((line) => line.msg === ALONE)).toHaveLength(1);
      await new Promise((resolve) => dropping.close(resolve));
      await redisServer.server.restart();
      await eventually(() => redis.connected);
      expect(logs.map((line) => line.msg)).toEqual([ALONE, CONNECTED]);
      expect(logs[0]).toMatchObject({ redis: `redis://127.0.0.1:${redisServer.server.port}` });
    } finally {
      dropping.close();
      await redis.close();
    }
  });

  it('never logs the password, not even when Redis refuses it', async () => {
    const logs: string[] = [];
    const wrong = 'wrong-redis-password';
    const url = redisServer.server.url.replace(encodeURIComponent(PASSWORD), wrong);
    // Redis counts the connections it was asked for: each attempt to reconnect shows.
    const admin = new Redis(redisServer.server.url);
    const received = async () =>
      Number(/total_connections_received:(\d+)/.exec(await admin.info('stats'))?.[1]);
    const before = await received();
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
      // Both connections refused twice more, each refusal a chance to log the password.
      await eventually(async () => (await received()) >= before + 6);
      expect(logs.length).toBeGreaterThan(0);
      for (const line of logs) {
        expect(line).not.toContain(wrong);
        expect(line).not.toContain(PASSWORD);
      }
    } finally {
      admin.disconnect();
      await redis.close();
    }
    const connection = await connect();
    await connection.redis.close();
    for (const line of connection.logs) expect(JSON.stringify(line)).not.toContain(PASSWORD);
  });
});
