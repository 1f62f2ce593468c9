import type { z } from 'zod';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import type * as Shared from '../upstreams/shared-document.js';
import { SharedDocuments } from '../upstreams/shared-document.js';
import type { Validators } from '../upstreams/validators.js';
import type { Envelope } from './envelope.js';
import { AcquireAnswer, ConfirmAnswer, ReadAnswer, StoreAnswer } from './messages.js';
import type { PrimaryLink } from './primary-link.js';

/**
 * The status feed's snapshots, shared by the workers of a replica through their primary
 * (`SnapshotHub`), with the protocol `RedisSnapshotStore` shares them between replicas with
 * (`SharedDocument`): per document and TTL one worker fetches, whichever asks, under the document's
 * lock; it stores the validated document in the primary, which tells every worker; the others
 * adopt it, built once per version per worker. A worker waiting for another's fetch is answered by
 * the primary when that fetch ends, and a notice supersedes a worker's older snapshot at once (the
 * primary holds only what a worker validated). While the primary cannot be reached, every call
 * fails with `RedisUnavailableError` and the worker's caches load alone.
 */
export class ClusterSnapshotStore extends SharedDocuments<ClusterDocument> {
  constructor({ link }: { link: PrimaryLink }) {
    super((name) => new ClusterDocument(link, name));
    link.on('notice', ({ name, version, fetchedAt }) =>
      this.registered(name)?.document.supersede(version, fetchedAt),
    );
  }
}

/** One document in the primary, as `SharedDocument` uses it: asks and tells over the link. */
class ClusterDocument implements Shared.DocumentBackend {
  readonly #link: PrimaryLink;
  readonly #name: string;

  constructor(link: PrimaryLink, name: string) {
    this.#link = link;
    this.#name = name;
  }

  get available(): boolean {
    return this.#link.connected;
  }

  async read(known: string): Promise<Shared.StoredSnapshot | 'none'> {
    const reply = await this.#link.ask({ op: 'read', name: this.#name, known });
    const answer = parse(ReadAnswer, reply);
    if (!answer.found) return 'none';
    return storedOf(answer, reply.body);
  }

  /** The primary answers when the lock is this worker's, or another's fetch ends, or at `waitMs`. */
  async acquire(ask: Shared.LockAsk): Promise<Shared.LockAnswer> {
    const { token, known, knownAt, answerFailures, lockMs, waitMs } = ask;
    const reply = await this.#link.ask(
      { op: 'acquire', name: this.#name, token, known, knownAt, answerFailures, lockMs, waitMs },
      undefined,
      waitMs + 5_000,
    );
    const answer = parse(AcquireAnswer, reply);
    switch (answer.status) {
      case 'timeout':
        throw new RedisUnavailableError(`waited ${waitMs} ms for another worker's fetch`);
      case 'stored': {
        const { version, fetchedAt } = answer;
        return { status: 'stored', version, fetchedAt, snapshot: storedOf(answer, reply.body) };
      }
      case 'failed':
        return { status: 'failed', code: answer.code, httpStatus: answer.httpStatus };
      default:
        return answer;
    }
  }

  async renew(token: string, lockMs: number): Promise<void> {
    this.#link.tell({ t: 'renew', name: this.#name, token, lockMs });
  }

  async release(token: string): Promise<void> {
    this.#link.tell({ t: 'release', name: this.#name, token });
  }

  async store(snapshot: Shared.FetchedSnapshot): Promise<boolean> {
    const { token, fetchedAt, body, retainMs, validators } = snapshot;
    const reply = await this.#link.ask(
      {
        op: 'store',
        name: this.#name,
        token,
        fetchedAt,
        retainMs,
        ...(validators?.etag === undefined ? {} : { etag: validators.etag }),
        ...(validators?.lastModified === undefined
          ? {}
          : { lastModified: validators.lastModified }),
      },
      body,
    );
    return parse(StoreAnswer, reply).stored;
  }

  async confirm(confirmation: Shared.Confirmation): Promise<boolean> {
    const reply = await this.#link.ask({ op: 'confirm', name: this.#name, ...confirmation });
    return parse(ConfirmAnswer, reply).confirmed;
  }

  async fail(failure: Shared.FailedFetch): Promise<void> {
    this.#link.tell({ t: 'fail', name: this.#name, ...failure });
  }

  /** The primary keeps only what a worker validated: a document that does not pass is a bug. */
  refused(): void {}
}

/** The answer's head in its shape; a bug's answer is as good as none. */
function parse<Schema extends z.ZodType>(schema: Schema, reply: Envelope): z.infer<Schema> {
  const parsed = schema.safeParse(reply.head);
  if (!parsed.success) throw new RedisUnavailableError('the primary answered out of shape');
  return parsed.data;
}

/** A snapshot as the primary describes it, with its body when it came. */
function storedOf(
  stamp: { version: string; fetchedAt: number; etag?: string; lastModified?: string },
  body: string | undefined,
): Shared.StoredSnapshot {
  const { version, fetchedAt, etag, lastModified } = stamp;
  const validators: Validators | undefined =
    etag === undefined && lastModified === undefined
      ? undefined
      : {
          ...(etag !== undefined && { etag }),
          ...(lastModified !== undefined && { lastModified }),
        };
  return { version, fetchedAt, validators, body };
}
