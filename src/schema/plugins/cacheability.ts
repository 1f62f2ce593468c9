import SchemaBuilder, {
  BasePlugin,
  type FieldNullability,
  type InputFieldMap,
  type PothosOutputFieldConfig,
  type SchemaTypes,
  type TypeParam,
} from '@pothos/core';
import type { GraphQLFieldResolver } from 'graphql';
import type { Snapshot } from '../../upstreams/snapshot-cache.js';

/*
 * Whether an answer may be served again from memory is declared where fields are defined: caching
 * is opt-in and fails closed. An answer is cacheable only if every field that resolved for it is
 * declared as reading status feed snapshots only, it read at least one snapshot (which is what
 * invalidates it), and it came out as one complete JSON document without errors or cookies. A new
 * field, one that reads the clock or another upstream, makes every answer that selects it
 * uncacheable without anyone having to remember. The two fields federation adds after the
 * builder's plugins ran are the exceptions: `_service` answers the schema's text, which never
 * changes while the process runs, and `_entities` resolves through the status loaders (which
 * record the snapshots read) or a Contract's, which marks the answer itself.
 */

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      cacheability: CacheabilityPlugin<Types>;
    }
    export interface BaseTypeOptions<Types extends SchemaTypes = SchemaTypes> {
      /**
       * The type's values come from status feed snapshots: its fields that read their parent's
       * properties (`t.expose…`) are declared as reading nothing else. A field with a resolver of
       * its own says so itself.
       */
      readsStatusSnapshots?: boolean;
    }
    export interface FieldOptions<
      Types extends SchemaTypes = SchemaTypes,
      ParentShape = unknown,
      Type extends TypeParam<Types> = TypeParam<Types>,
      Nullable extends FieldNullability<Type> = FieldNullability<Type>,
      Args extends InputFieldMap = InputFieldMap,
      ResolveShape = unknown,
      ResolveReturnShape = unknown,
    > {
      /** The field reads nothing but its parent and the status feed loaders. */
      readsStatusSnapshots?: boolean;
    }
  }
}

/** What one request's answer was built from, collected while it executes. */
export class CacheabilityRecord {
  readonly #snapshots = new Set<Snapshot<unknown>>();
  #uncacheable = false;

  /** The status feed snapshots the answer read; it is good while they are all current. */
  get snapshots(): readonly object[] {
    return [...this.#snapshots];
  }

  /** When the oldest snapshot read was fetched (epoch ms): the answer is as fresh as it. */
  get oldestFetch(): number {
    return Math.min(...[...this.#snapshots].map(({ fetchedAt }) => fetchedAt.getTime()));
  }

  /**
   * Whether one of the snapshots read was a stand-in served while the feed fails: the answer may
   * be served again while it stands in, but no browser or CDN may keep it.
   */
  get stale(): boolean {
    return [...this.#snapshots].some(({ stale }) => stale);
  }

  snapshotRead(snapshot: Snapshot<unknown>): void {
    this.#snapshots.add(snapshot);
  }

  /** The answer depends on something besides status snapshots: an undeclared field, an upstream. */
  markUncacheable(): void {
    this.#uncacheable = true;
  }

  /** Whether execution allows caching: nothing marked it, and it read at least one snapshot. */
  get cacheable(): boolean {
    return !this.#uncacheable && this.#snapshots.size > 0;
  }
}

/** The part of the GraphQL context this plugin needs. */
export interface CacheabilityContext {
  /** Present only for requests the response cache may answer later. */
  readonly cacheability?: CacheabilityRecord | undefined;
}

/**
 * Makes every undeclared field report itself when it resolves, so that its answer is not kept.
 * Declared fields keep their resolvers untouched: the status path pays nothing.
 */
export class CacheabilityPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    field: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    if (this.#declared(field)) return resolver;
    return (parent, args, context: CacheabilityContext, info) => {
      context.cacheability?.markUncacheable();
      return resolver(parent, args, context, info);
    };
  }

  #declared(field: PothosOutputFieldConfig<Types>): boolean {
    if (field.pothosOptions.readsStatusSnapshots === true) return true;
    if (typeof field.extensions?.pothosExposedField !== 'string') return false;
    const type = this.buildCache.getTypeConfig(field.parentType);
    return type.pothosOptions.readsStatusSnapshots === true;
  }
}

const pluginName = 'cacheability';
SchemaBuilder.registerPlugin(pluginName, CacheabilityPlugin);

export default pluginName;
