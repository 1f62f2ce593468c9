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
  GraphQLIncludeDirective,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
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
 * An operation's status pages are counted before it runs: each page it reads may cost an upstream
 * request per document, so a client that names fifty pages in each of thirty aliases must not make
 * the gateway fetch fifteen hundred. A field that reads pages its parent did not bring says which,
 * from its arguments and the configuration (`readsPages`); `pagesReadBy` adds them up over the
 * whole operation, every alias, fragment and field, before any resolver runs. A field that reads
 * its parent's page (a component's incidents) declares nothing: its parent's field counted it.
 */

/** The configured pages, as a declaration reads them. */
export interface PageDirectory {
  /** Every configured page, in configuration order. */
  readonly configs: readonly StatusPageConfig[];
  /** The page a field without a slug reads. */
  readonly defaultSlug: string;
  has(slug: string): boolean;
}

/** The pages a field reads, from its arguments (as the resolver gets them) and the configuration. */
export type PagesRead<Args = Record<string, unknown>> = (
  args: Args,
  pages: PageDirectory,
) => Iterable<string>;

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      pageBudget: PageBudgetPlugin<Types>;
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
       * The status pages the field reads that its parent did not: those its arguments name, or
       * those the configuration maps it to. Counted against `MAX_PAGES_PER_OPERATION` before the
       * operation runs. Slugs nobody configured may be left in: they are not counted.
       */
      readsPages?: PagesRead<InputShapeFromFields<Args>>;
    }
  }
}

/** Where a field's declaration lands in the built schema: its `extensions`. */
const EXTENSION = 'readsPages';

/** Puts each field's `readsPages` where `pagesReadBy` finds it, on the built field. */
export class PageBudgetPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(
    field: PothosOutputFieldConfig<Types>,
  ): PothosOutputFieldConfig<Types> {
    const declared = field.pothosOptions.readsPages;
    if (!declared) return field;
    return { ...field, extensions: { ...field.extensions, [EXTENSION]: declared } };
  }
}

/** Declares what a field built outside the builder (`_entities`) reads. */
export function declarePagesRead(
  field: { extensions: Record<string, unknown> } | undefined,
  pagesRead: PagesRead,
): void {
  if (field) field.extensions = { ...field.extensions, [EXTENSION]: pagesRead };
}

/**
 * The configured pages `document`'s operation reads, every field that declares `readsPages`
 * counted with its arguments as the executor will see them; `undefined` when the variables do not
 * coerce (execution then refuses the operation before any resolver). Fields under `@skip` or a
 * false `@include` read nothing. Each fragment is walked once, however often it is spread.
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
  const variables = coerced.coerced;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments.set(definition.name.value, definition);
    }
  }
  const read = new Set<string>();
  const walked = new Set<string>();

  const included = (node: Parameters<typeof getDirectiveValues>[1]) =>
    getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;

  const walk = (selectionSet: SelectionSetNode, parent: Selectable | undefined): void => {
    for (const selection of selectionSet.selections) {
      if (!included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        const field = parent?.getFields()[selection.name.value];
        if (!field) continue;
        const declared = field.extensions[EXTENSION] as PagesRead | undefined;
        if (declared) {
          for (const slug of declared(getArgumentValues(field, selection, variables), pages)) {
            if (pages.has(slug)) read.add(slug);
          }
        }
        if (selection.selectionSet)
          walk(selection.selectionSet, fieldsOf(getNamedType(field.type)));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition?.name.value;
        walk(selection.selectionSet, condition ? fieldsOf(schema.getType(condition)) : parent);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || walked.has(name)) continue;
        walked.add(name);
        walk(fragment.selectionSet, fieldsOf(schema.getType(fragment.typeCondition.name.value)));
      }
    }
  };
  walk(operation.selectionSet, root);
  return read;
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
    `The operation reads ${read} status pages; the gateway reads at most ${max} for one operation (MAX_PAGES_PER_OPERATION): name fewer pages in its fields' slugs, or split it.`,
    { extensions: { limit: 'MAX_PAGES_PER_OPERATION' } },
  );
}

const pluginName = 'pageBudget';
SchemaBuilder.registerPlugin(pluginName, PageBudgetPlugin);

export default pluginName;
