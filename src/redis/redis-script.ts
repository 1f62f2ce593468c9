import type { Redis } from 'ioredis';

type ScriptCommand = (...keysAndArgs: (string | number)[]) => Promise<unknown>;

let defined = 0;

/**
 * A Lua script Redis runs atomically, through ioredis' own scripting (`defineCommand`): its source
 * sent once per connection, then called by its digest (`EVALSHA`), and sent again if Redis has
 * forgotten it (a restart, `SCRIPT FLUSH`).
 */
export class RedisScript {
  readonly #name = `gatewayScript${defined++}`;
  readonly #lua: string;

  constructor(lua: string) {
    this.#lua = lua;
  }

  run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    if (!(this.#name in redis)) redis.defineCommand(this.#name, { lua: this.#lua });
    const command = (redis as unknown as Record<string, ScriptCommand>)[
      this.#name
    ] as ScriptCommand;
    return command.call(redis, keys.length, ...keys, ...args);
  }
}
