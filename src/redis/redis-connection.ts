import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisConfig } from '../config.js';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';

/**
 * `connecting` until Redis first answers or fails; `connected` while this replica shares state
 * through it; `unavailable` while it works alone.
 */
export type RedisState = 'connecting' | 'connected' | 'unavailable';

/** What `/readiness` reports of Redis: never a host, an address or a password. */
export interface RedisReport {
  readonly state: RedisState;
  /** When it entered this state. */
  readonly since: Date;
}

export interface RedisConnectionOptions extends RedisConfig {
  readonly logger: Logger;
  /** Told of every change of state, for metrics. */
  readonly onStateChange?: (state: RedisState) => void;
  /**
   * The longest pause between two attempts to reconnect, and between two pings of a Redis that
   * stopped answering.
   * @default 1000
   */
  readonly retryMs?: number;
}

const TIMED_OUT = 'Command timed out';
/**
 * One line per this many ms at most about commands Redis refuses while connected, and per kind of
 * value read from Redis and refused: whoever can write to Redis must not flood the logs.
 */
const LOG_EVERY_MS = 60_000;

/**
 * The Redis the replicas share, through two connections: one for commands and one that listens to
 * channels (a connection that subscribes can do nothing else). Commands never wait for a
 * connection (no offline queue) and never longer than `commandTimeoutMs`; while Redis is not
 * connected every command fails at once with `RedisUnavailableError`, and its callers work alone.
 * Connecting again is ioredis' job; a Redis that stops answering while its socket stays open is
 * pinged until it answers. Each change of state is logged once, with the URL's password cut.
 */
export class RedisConnection {
  readonly #commands: Redis;
  readonly #subscriber: Redis;
  readonly #options: RedisConnectionOptions;
  /** Per channel, its listeners and the largest message they take. */
  readonly #channels = new Map<
    string,
    { listeners: Set<(message: string) => void>; maxBytes: number }
  >();
  /** Per kind of line logged at most every `LOG_EVERY_MS`, when it was last logged. */
  readonly #logged = new Map<string, number>();
  #report: RedisReport = { state: 'connecting', since: new Date() };
  #lastError: Error | undefined;
  /** Whether the subscriber connection listens to every channel. */
  #listening = false;
  /** The pings of a hung Redis (commands time out on connections that look open), until it answers. */
  #ping: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: RedisConnectionOptions) {
    this.#options = options;
    const retryMs = options.retryMs ?? 1_000;
    const clientOptions: RedisOptions = {
      connectionName: 'ledger-status-gateway',
      commandTimeout: options.commandTimeoutMs,
      connectTimeout: Math.max(options.commandTimeoutMs, 2_000),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResubscribe: false,
      retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, retryMs),
    };
    this.#commands = new Redis(options.url, clientOptions);
    this.#subscriber = new Redis(options.url, clientOptions);
    for (const client of [this.#commands, this.#subscriber]) {
      // Without an 'error' listener, a refused connection would be an unhandled 'error' event.
      client.on('error', (error: Error) => {
        this.#lastError = error;
        this.#update();
      });
      client.on('ready', () => this.#update());
      client.on('close', () => this.#update());
    }
    this.#subscriber.on('close', () => {
      this.#listening = false;
    });
    this.#subscriber.on('ready', () => void this.#listen());
    // Buffers, not strings: a message's length is checked before it is decoded.
    this.#subscriber.on('messageBuffer', (channelBytes: Buffer, bytes: Buffer) => {
      const channel = channelBytes.toString();
      const subscribed = this.#channels.get(channel);
      if (!subscribed) return;
      const { listeners, maxBytes } = subscribed;
      if (bytes.length > maxBytes) {
        this.refused('oversized message', { channel, bytes: bytes.length, maxBytes });
        return;
      }
      const message = bytes.toString();
      for (const listener of listeners) {
        try {
          listener(message);
        } catch (error) {
          options.logger.error({ err: error, channel }, 'a redis message listener failed');
        }
      }
    });
  }

  get state(): RedisState {
    return this.#report.state;
  }

  /** Whether commands can be sent now; when not, callers work alone without trying. */
  get connected(): boolean {
    return this.state === 'connected';
  }

  report(): RedisReport {
    return this.#report;
  }

  /** `name` in the gateway's key space: every key and channel starts with the configured prefix. */
  key(name: string): string {
    return `${this.#options.keyPrefix}${name}`;
  }

  /**
   * Runs commands on the command connection. Fails with `RedisUnavailableError` when Redis is not
   * connected, refuses a command or does not answer within the command timeout.
   */
  async run<Result>(work: (redis: Redis) => Promise<Result>): Promise<Result> {
    if (!this.connected) throw new RedisUnavailableError(`redis is ${this.state}`);
    try {
      return await work(this.#commands);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (message === TIMED_OUT) this.#hang(error as Error);
      else if (this.#mayLog('failed command')) {
        this.#options.logger.warn(
          { err: error, redis: this.#options.loggedUrl },
          'a redis command failed; the replica did that work alone',
        );
      }
      throw new RedisUnavailableError(`redis: ${message}`, { cause: error });
    }
  }

  /**
   * Calls `listener` with each message published on `channel` (a key, see `key`) that is not
   * longer than `maxBytes`; a longer one is dropped before it is decoded (and `refused` is told):
   * ioredis delivers a message whole, and whoever can publish must not make a replica parse
   * megabytes of JSON. Whoever can write to Redis can publish: a listener checks what it gets.
   */
  subscribe(channel: string, listener: (message: string) => void, maxBytes: number): () => void {
    let subscribed = this.#channels.get(channel);
    if (subscribed) subscribed.maxBytes = Math.max(subscribed.maxBytes, maxBytes);
    else {
      subscribed = { listeners: new Set(), maxBytes };
      this.#channels.set(channel, subscribed);
      if (this.#listening) {
        this.#subscriber.subscribe(channel).catch((error: unknown) => {
          this.#options.logger.warn({ err: error, channel }, 'redis subscription failed');
        });
      }
    }
    const { listeners } = subscribed;
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /**
   * Notes a value read from Redis (a key, a message) that was refused: too large, not of its
   * shape, from the future, without an expiry. Anyone who can write to Redis can write these,
   * so they are logged at most once a minute per `kind`, and the replica carries on without them.
   */
  refused(kind: string, details: Record<string, unknown> = {}): void {
    if (!this.#mayLog(`refused ${kind}`)) return;
    this.#options.logger.warn(
      { ...details, refused: kind },
      'a value read from redis was refused; this replica carries on without it',
    );
  }

  /** Closes both connections; nothing is logged about them from now on. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#ping);
    await Promise.all(
      [this.#commands, this.#subscriber].map((client) =>
        client.quit().catch(() => client.disconnect()),
      ),
    );
  }

  async #listen(): Promise<void> {
    const channels = [...this.#channels.keys()];
    try {
      if (channels.length > 0) await this.#subscriber.subscribe(...channels);
      this.#listening = true;
    } catch (error) {
      this.#lastError = error as Error;
    }
    this.#update();
  }

  #hang(error: Error): void {
    this.#lastError = error;
    if (this.#ping) return;
    this.#ping = setInterval(() => {
      this.#commands.ping().then(
        () => {
          clearInterval(this.#ping);
          this.#ping = undefined;
          this.#update();
        },
        () => {},
      );
    }, this.#options.retryMs ?? 1_000);
    this.#ping.unref();
    this.#update();
  }

  /** Whether a line of this kind may be logged now (and notes that it is): one per `LOG_EVERY_MS`. */
  #mayLog(kind: string): boolean {
    if (this.#closed) return false;
    const now = Date.now();
    const last = this.#logged.get(kind);
    if (last !== undefined && now - last < LOG_EVERY_MS) return false;
    this.#logged.set(kind, now);
    return true;
  }

  #update(): void {
    if (this.#closed) return;
    const connected = this.#commands.status === 'ready' && this.#listening && !this.#ping;
    const state: RedisState = connected
      ? 'connected'
      : this.state === 'connecting' && this.#lastError === undefined
        ? 'connecting'
        : 'unavailable';
    if (state === this.state) return;
    this.#report = { state, since: new Date() };
    const { logger, loggedUrl, onStateChange } = this.#options;
    if (state === 'connected') {
      logger.info(
        { redis: loggedUrl },
        'redis connected: this replica shares state with the others',
      );
    } else if (state === 'unavailable') {
      logger.warn(
        { redis: loggedUrl, reason: this.#lastError?.message ?? 'connection closed' },
        'redis unavailable: this replica works alone until it is back',
      );
    }
    onStateChange?.(state);
  }
}
