import type { GraphQLSchema } from 'graphql';
import { wrapResolvers } from '../../schema/wrap-resolvers.js';

/*
 * The one place that decides whether an answer may be served again from memory. Caching is opt-in
 * and fails closed: an answer is cacheable only if every field that resolved for it is declared
 * as reading status feed snapshots only, it read at least one snapshot (which is what invalidates
 * it), and it came out as one complete JSON document without errors or cookies. A new field, one
 * that reads the clock or another upstream, makes every answer that selects it uncacheable
 * without anyone having to remember.
 */

/**
 * Declares that a value is computed from status feed snapshots alone. On a field: its resolver
 * reads nothing but its parent and the status feed loaders. On an object or interface type: its
 * exposed fields (plain property reads of a snapshot's object) are declared too. Put it in the
 * Pothos `extensions` option.
 */
export const READS_STATUS_SNAPSHOTS = { readsStatusSnapshots: true } as const;

/** What one request's answer was built from, collected while it executes. */
export class CacheabilityRecord {
  readonly #snapshots = new Set<object>();
  #uncacheableBecause: string | undefined;
  #oldestFetch = Number.POSITIVE_INFINITY;
  #stale = false;

  /** The status feed snapshots the answer read; it is good while they are all current. */
  get snapshots(): readonly object[] {
    return [...this.#snapshots];
  }

  /** Why the answer may not be kept (the first reason given), if any: for debugging. */
  get uncacheableBecause(): string | undefined {
    return this.#uncacheableBecause;
  }

  /** When the oldest snapshot read was fetched (epoch ms): the answer is as fresh as it. */
  get oldestFetch(): number {
    return this.#oldestFetch;
  }

  /**
   * Whether one of the snapshots read was a stand-in served while the feed fails: the answer may
   * be served again while it stands in, but no browser or CDN may keep it.
   */
  get stale(): boolean {
    return this.#stale;
  }

  snapshotRead(snapshot: { readonly fetchedAt: Date; readonly stale: boolean }): void {
    this.#snapshots.add(snapshot);
    this.#oldestFetch = Math.min(this.#oldestFetch, snapshot.fetchedAt.getTime());
    if (snapshot.stale) this.#stale = true;
  }

  /** The answer depends on something besides status snapshots: an undeclared field, an upstream. */
  markUncacheable(reason: string): void {
    this.#uncacheableBecause ??= reason;
  }

  /** Whether execution allows caching: nothing marked it, and it read at least one snapshot. */
  get cacheable(): boolean {
    return this.#uncacheableBecause === undefined && this.#snapshots.size > 0;
  }
}

/** The part of the GraphQL context this module needs. */
export interface CacheabilityContext {
  /** Present only for requests the response cache may answer later. */
  readonly cacheability?: CacheabilityRecord | undefined;
}

/**
 * Makes every undeclared field report itself when it resolves, so that its answer is not cached.
 * Declared fields keep their resolvers untouched: the status path pays nothing. `declared` names
 * fields, as `Type.field`, that a plugin builds and so cannot carry the extension.
 */
export function enforceCacheability(
  schema: GraphQLSchema,
  declared: readonly string[] = [],
): GraphQLSchema {
  return wrapResolvers<CacheabilityContext>(schema, (resolve, field, type) => {
    const coordinate = `${type.name}.${field.name}`;
    if (
      field.extensions.readsStatusSnapshots === true ||
      (type.extensions.readsStatusSnapshots === true &&
        typeof field.extensions.pothosExposedField === 'string') ||
      declared.includes(coordinate)
    ) {
      return undefined;
    }
    return (source, args, context, info) => {
      context.cacheability?.markUncacheable(`${coordinate} is not declared`);
      return resolve(source, args, context, info);
    };
  });
}

/** Media types of answers that are one complete JSON document. */
const COMPLETE_JSON = /^application\/(graphql-response\+)?json\b/i;

/** Whether an answer is one complete JSON document; anything else is streamed, never buffered. */
export const isCompleteJson = (contentType: string | null): boolean =>
  contentType !== null && COMPLETE_JSON.test(contentType);

/** Whether a finished answer may be kept and served again while its snapshots are current. */
export function isCacheableAnswer(
  record: CacheabilityRecord,
  response: Response,
  body: Buffer,
): boolean {
  return (
    response.status === 200 &&
    isCompleteJson(response.headers.get('content-type')) &&
    !response.headers.has('set-cookie') &&
    record.cacheable &&
    !hasErrors(body)
  );
}

function hasErrors(body: Buffer): boolean {
  try {
    return (JSON.parse(body.toString('utf8')) as { errors?: unknown }).errors !== undefined;
  } catch {
    return true;
  }
}
