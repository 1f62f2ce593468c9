import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script Redis runs atomically: sent once, then called by its digest (`EVALSHA`), and sent
 * again if Redis has forgotten it (a restart, `SCRIPT FLUSH`).
 */
export class RedisScript {
  readonly #source: string;
  readonly #digest: string;

  constructor(source: string) {
    this.#source = source;
    this.#digest = createHash('sha1').update(source).digest('hex');
  }

  async run(
    redis: Redis,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    try {
      return await redis.evalsha(this.#digest, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.#source, keys.length, ...keys, ...args);
    }
  }
}
