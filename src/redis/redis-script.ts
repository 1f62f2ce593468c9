import type { RedisConnection } from './redis-connection.js';

type ScriptCommand = (...keysAndArgs: (string | number)[]) => Promise<unknown>;

let defined = 0;

/**
 * A Lua script Redis runs atomically, through ioredis' own scripting (`defineCommand`): its source
 * sent once per connection, then called by its digest (`EVALSHA`), and sent again if Redis has
 * forgotten it (a restart, `SCRIPT FLUSH`). It runs as `RedisConnection.run`'s work, and answers
 * `Reply`, the shape the script's Lua returns.
 */
export function redisScript<Reply = unknown>(lua: string) {
  const name = `gatewayScript${defined++}`;
  return (
    connection: RedisConnection,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<Reply> =>
    connection.run((redis) => {
      if (!(name in redis)) redis.defineCommand(name, { lua });
      const command = (redis as unknown as Record<string, ScriptCommand>)[name] as ScriptCommand;
      return command.call(redis, keys.length, ...keys, ...args) as Promise<Reply>;
    });
}
