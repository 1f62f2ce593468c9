import {
  type GraphQLFieldResolver,
  type GraphQLSchema,
  isObjectType,
  Kind,
  parse,
  type SelectionSetNode,
} from 'graphql';
import { codedError } from '../errors/coded-error.js';
import type { GatewayContext } from './context.js';

/**
 * Checks `_entities` representations before any of them is resolved: at most
 * `maxEntityRepresentations` per call (refused whole, before any upstream is asked), and each one
 * an object naming an entity of this subgraph with every field of one of its `@key`s as a
 * non-empty string (a nested key field, `page { slug }`, as an object of them). The key checked is
 * the largest whose top fields the representation all carries (else the first), so that one
 * carrying a field of a key has it checked. A representation that is not answers an error at its
 * own index; the others resolve.
 */
export function guardEntityRepresentations(schema: GraphQLSchema): GraphQLSchema {
  const field = schema.getQueryType()?.getFields()._entities;
  const resolve = field?.resolve as GraphQLFieldResolver<unknown, GatewayContext> | undefined;
  if (!field || !resolve) return schema;
  const keys = entityKeys(schema);

  field.resolve = async (source, args, context: GatewayContext, info) => {
    const representations = args.representations as readonly unknown[];
    const max = context.maxEntityRepresentations;
    if (representations.length > max) {
      throw codedError(
        'BAD_USER_INPUT',
        `_entities takes at most ${max} representations in one request, not ${representations.length}: split the call.`,
        { extensions: { limit: 'MAX_ENTITY_REPRESENTATIONS' } },
      );
    }
    const problems = representations.map((representation, index) =>
      problemOf(representation, index, keys),
    );
    const valid = representations.filter((_, index) => problems[index] === undefined);
    const resolved =
      valid.length > 0
        ? ((await resolve(source, { ...args, representations: valid }, context, info)) as unknown[])
        : [];
    let next = 0;
    return problems.map((problem) =>
      problem === undefined ? resolved[next++] : codedError('BAD_USER_INPUT', problem),
    );
  };
  return schema;
}

/** The fields of a key: each leaf `null`, each nested field its own fields. */
type KeyFields = ReadonlyMap<string, KeyFields | null>;

/** Each entity type's `@key`s, in the schema's order, read from the schema. */
function entityKeys(schema: GraphQLSchema): ReadonlyMap<string, readonly KeyFields[]> {
  const keys = new Map<string, KeyFields[]>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type)) continue;
    for (const directive of type.astNode?.directives ?? []) {
      if (directive.name.value !== 'key') continue;
      const fields = directive.arguments?.find((argument) => argument.name.value === 'fields');
      if (fields?.value.kind !== Kind.STRING) continue;
      const [operation] = parse(`{ ${fields.value.value} }`).definitions;
      if (operation?.kind !== Kind.OPERATION_DEFINITION) continue;
      keys.set(type.name, [...(keys.get(type.name) ?? []), keyFieldsOf(operation.selectionSet)]);
    }
  }
  return keys;
}

function keyFieldsOf(selectionSet: SelectionSetNode): KeyFields {
  const fields = new Map<string, KeyFields | null>();
  for (const selection of selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    fields.set(
      selection.name.value,
      selection.selectionSet ? keyFieldsOf(selection.selectionSet) : null,
    );
  }
  return fields;
}

/** The first key field `value` lacks or carries as something else (a dotted path), if any. */
function missingField(value: Record<string, unknown>, fields: KeyFields): string | undefined {
  for (const [name, nested] of fields) {
    const field = value[name];
    if (nested === null) {
      if (typeof field !== 'string' || field === '') return name;
    } else {
      if (typeof field !== 'object' || field === null) return `${name}.${[...nested.keys()][0]}`;
      const inner = missingField(field as Record<string, unknown>, nested);
      if (inner !== undefined) return `${name}.${inner}`;
    }
  }
  return undefined;
}

function problemOf(
  representation: unknown,
  index: number,
  keys: ReadonlyMap<string, readonly KeyFields[]>,
): string | undefined {
  const at = `Representation ${index}`;
  if (typeof representation !== 'object' || representation === null)
    return `${at} is not an object.`;
  const value = representation as Record<string, unknown>;
  const { __typename: typename } = value;
  const candidates = typeof typename === 'string' ? keys.get(typename) : undefined;
  if (!candidates) return `${at} does not name an entity of this subgraph in __typename.`;
  const complete = (fields: KeyFields) => [...fields.keys()].every((name) => name in value);
  const key =
    candidates.filter(complete).sort((a, b) => b.size - a.size)[0] ?? (candidates[0] as KeyFields);
  const missing = missingField(value, key);
  return missing === undefined
    ? undefined
    : `${at} (${String(typename)}) needs its key field "${missing}" as a non-empty string.`;
}
