import SchemaBuilder, {
  BasePlugin,
  type FieldNullability,
  type InputFieldMap,
  type InputShapeFromFields,
  type PothosOutputFieldConfig,
  type SchemaTypes,
  type TypeParam,
} from '@pothos/core';
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLField,
  GraphQLIncludeDirective,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  GraphQLSkipDirective,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getOperationAST,
  getVariableValues,
  isInterfaceType,
  isObjectType,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import type { StatusPageConfig } from '../../config.js';
import { codedError } from '../../errors/coded-error.js';

/*
 * An operation's status pages are counted before it runs: each page whose feed it reads may cost
 * an upstream request per document, so a client that names fifty pages in each of thirty aliases
 * must not make the gateway fetch fifteen hundred. Every field is about some pages (its scope: the
 * pages its arguments name, or its parent's) and reads the feeds of some of them: by default all
 * of its scope, so that a new field is counted without anyone having to remember; a field that
 * answers from the configuration alone (a page's slug, name, tags) says it reads none. The pages
 * read are added up over the whole operation, every alias, fragment and field, before any
 * resolver runs (`pagesReadBy`).
 */

/** The configured pages, as a declaration reads them. */
export interface PageDirectory {
  /** Every configured page, in configuration order. */
  readonly configs: readonly StatusPageConfig[];
  /** The page a field without a slug reads. */
  readonly defaultSlug: string;
  has(slug: string): boolean;
  /** Page `slug`'s configuration; throws for a slug nobody configured (check `has` first). */
  config(slug: string): StatusPageConfig;
  /** Page `slug`'s place in the configuration; -1 for a slug nobody configured. */
  position(slug: string): number;
  /** The pages carrying `tag`, in configuration order. */
  tagged(tag: string): readonly string[];
}

/** What a field does with status pages, known before the operation runs. */
export interface PagesRead {
  /** The pages the field's value is about, and so its sub-selection's; its parent's if omitted. */
  readonly scope?: Iterable<string>;
  /** The pages whose feeds the field itself reads; all of its scope if omitted. */
  readonly reads?: Iterable<string>;
}

/**
 * A field's `PagesRead`, from its arguments (as the resolver gets them), the configuration and
 * its parent's scope.
 */
export type ReadsPages<Args = Record<string, unknown>> = (
  args: Args,
  pages: PageDirectory,
  scope: readonly string[],
) => PagesRead;

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      pageBudget: PageBudgetPlugin<Types>;
    }
    export interface BaseTypeOptions<Types extends SchemaTypes = SchemaTypes> {
      /** What the type's fields that declare nothing of their own do with status pages. */
      readsPages?: ReadsPages;
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
      /**
       * The pages the field is about and those whose feeds it reads, counted against
       * `MAX_PAGES_PER_OPERATION` before the operation runs. Without it (nor one on its type), the
       * field is about its parent's pages and reads all of them. Slugs nobody configured may be
       * left in: they are not counted.
       */
      readsPages?: ReadsPages<InputShapeFromFields<Args>>;
    }
  }
}

/** Where a field's declaration lands in the built schema: its `extensions`. */
const EXTENSION = 'readsPages';

/** A field that answers from the configuration alone: about its parent's pages, reading none. */
export const configurationOnly: ReadsPages<unknown> = () => ({ reads: [] });

/** A field that reads the feeds of its parent's pages: what a field declaring nothing does. */
export const readsItsPages: ReadsPages<unknown> = () => ({});

/** Puts each field's `readsPages` (its own, else its type's) on the built field. */
export class PageBudgetPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(
    field: PothosOutputFieldConfig<Types>,
  ): PothosOutputFieldConfig<Types> {
    const declared =
      field.pothosOptions.readsPages ??
      this.buildCache.getTypeConfig(field.parentType).pothosOptions.readsPages;
    if (!declared) return field;
    return { ...field, extensions: { ...field.extensions, [EXTENSION]: declared } };
  }
}

/** Declares what a field built outside the builder (`_entities`) does with pages. */
export function declarePagesRead(
  field: { extensions: Record<string, unknown> } | undefined,
  readsPages: ReadsPages,
): void {
  if (field) field.extensions = { ...field.extensions, [EXTENSION]: readsPages };
}

interface Walk {
  readonly schema: GraphQLSchema;
  readonly variables: Record<string, unknown>;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  readonly pages: PageDirectory;
  /** The pages read so far. */
  readonly read: Set<string>;
}

/**
 * The configured pages whose feeds `document`'s operation reads, with its arguments as the
 * executor will see them; `undefined` when the variables do not coerce (execution then refuses
 * the operation before any resolver). Fields under `@skip` or a false `@include` read nothing.
 */
export function pagesReadBy(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Readonly<Record<string, unknown>> | null | undefined,
  pages: PageDirectory,
): Set<string> | undefined {
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return new Set();
  const coerced = getVariableValues(
    schema,
    operation.variableDefinitions ?? [],
    rawVariables ?? {},
    {
      maxErrors: 1,
    },
  );
  if (coerced.errors) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments.set(definition.name.value, definition);
    }
  }
  const walk: Walk = { schema, variables: coerced.coerced, fragments, pages, read: new Set() };
  walkSelections(walk, operation.selectionSet, root, []);
  return walk.read;
}

/**
 * The configured pages whose feeds the sub-selection of the field being resolved reads, its value
 * being about `scope`: what a resolver asks before it reads pages its selection may not need.
 */
export function pagesReadBelow(
  info: GraphQLResolveInfo,
  pages: PageDirectory,
  scope: readonly string[],
): Set<string> {
  const walk: Walk = {
    schema: info.schema,
    variables: info.variableValues,
    fragments: new Map(Object.entries(info.fragments)),
    pages,
    read: new Set(),
  };
  const type = fieldsOf(getNamedType(info.returnType));
  for (const node of info.fieldNodes) {
    if (node.selectionSet) walkSelections(walk, node.selectionSet, type, scope);
  }
  return walk.read;
}

function walkSelections(
  walk: Walk,
  selectionSet: SelectionSetNode,
  parent: Selectable | undefined,
  scope: readonly string[],
  /** The fragments walked in this scope: each once, however often it is spread in it. */
  walked = new Set<string>(),
): void {
  const { schema, variables, fragments, pages, read } = walk;
  for (const selection of selectionSet.selections) {
    if (
      getDirectiveValues(GraphQLSkipDirective, selection, variables)?.if === true ||
      getDirectiveValues(GraphQLIncludeDirective, selection, variables)?.if === false
    ) {
      continue;
    }
    if (selection.kind === Kind.FIELD) {
      const field = parent?.getFields()[selection.name.value] as
        | GraphQLField<unknown, unknown>
        | undefined;
      if (!field) continue;
      const declared = field.extensions[EXTENSION] as ReadsPages | undefined;
      const { scope: own, reads } = declared
        ? declared(getArgumentValues(field, selection, variables), pages, scope)
        : ({} as PagesRead);
      const fieldScope = own ? [...own].filter((slug) => pages.has(slug)) : scope;
      for (const slug of reads ?? fieldScope) if (pages.has(slug)) read.add(slug);
      if (selection.selectionSet) {
        walkSelections(
          walk,
          selection.selectionSet,
          fieldsOf(getNamedType(field.type)),
          fieldScope,
        );
      }
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const condition = selection.typeCondition?.name.value;
      const type = condition ? fieldsOf(schema.getType(condition)) : parent;
      walkSelections(walk, selection.selectionSet, type, scope, walked);
    } else {
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (!fragment || walked.has(name)) continue;
      walked.add(name);
      const type = fieldsOf(schema.getType(fragment.typeCondition.name.value));
      walkSelections(walk, fragment.selectionSet, type, scope, walked);
    }
  }
}

/** A type a selection picks fields of; a union has none but `__typename`. */
type Selectable = GraphQLObjectType | GraphQLInterfaceType;

function fieldsOf(type: unknown): Selectable | undefined {
  return isObjectType(type) || isInterfaceType(type) ? type : undefined;
}

/**
 * The refusal of an operation that reads more than `max` pages: before it runs (`usePageBudget`),
 * or, for a read no declaration foresaw, when it would read one more (`createContext`).
 */
export function pageBudgetExceeded(read: number, max: number): GraphQLError {
  return codedError(
    'BAD_USER_INPUT',
    `The operation reads ${read} status pages; the gateway reads at most ${max} for one operation (MAX_PAGES_PER_OPERATION): name fewer pages in its fields' slugs, or select only what their configuration answers (slug, name, tags, chains), or split it.`,
    { extensions: { limit: 'MAX_PAGES_PER_OPERATION' } },
  );
}

const pluginName = 'pageBudget';
SchemaBuilder.registerPlugin(pluginName, PageBudgetPlugin);

export default pluginName;
