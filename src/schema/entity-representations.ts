import { GraphQLError, type GraphQLFieldResolver, type GraphQLSchema, isObjectType } from 'graphql';

/** The part of the context this guard reads. */
export interface EntityLimitContext {
  /** Representations one `_entities` call may resolve (`MAX_ENTITY_REPRESENTATIONS`). */
  readonly maxEntityRepresentations: number;
}

/**
 * Checks `_entities` representations before any of them is resolved: at most
 * `maxEntityRepresentations` per call (refused whole, before any upstream is asked), and each one
 * an object naming an entity of this subgraph with every field of its `@key` as a non-empty
 * string. A representation that is not answers an error at its own index; the others resolve.
 */
export function guardEntityRepresentations(schema: GraphQLSchema): GraphQLSchema {
  const field = schema.getQueryType()?.getFields()._entities;
  const resolve = field?.resolve as GraphQLFieldResolver<unknown, EntityLimitContext> | undefined;
  if (!field || !resolve) return schema;
  const keys = entityKeys(schema);

  field.resolve = async (source, args, context: EntityLimitContext, info) => {
    const representations = args.representations as readonly unknown[];
    const max = context.maxEntityRepresentations;
    if (representations.length > max) {
      throw new GraphQLError(
        `_entities takes at most ${max} representations in one request, not ${representations.length}: split the call.`,
        { extensions: { code: 'BAD_USER_INPUT', limit: 'MAX_ENTITY_REPRESENTATIONS' } },
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
      problem === undefined
        ? resolved[next++]
        : new GraphQLError(problem, { extensions: { code: 'BAD_USER_INPUT' } }),
    );
  };
  return schema;
}

/** Each entity type's `@key` fields, read from the schema. */
function entityKeys(schema: GraphQLSchema): ReadonlyMap<string, readonly string[]> {
  const keys = new Map<string, string[]>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type)) continue;
    for (const directive of type.astNode?.directives ?? []) {
      if (directive.name.value !== 'key') continue;
      const fields = directive.arguments?.find((argument) => argument.name.value === 'fields');
      if (fields?.value.kind === 'StringValue')
        keys.set(type.name, fields.value.value.split(/\s+/));
    }
  }
  return keys;
}

function problemOf(
  representation: unknown,
  index: number,
  keys: ReadonlyMap<string, readonly string[]>,
): string | undefined {
  const at = `Representation ${index}`;
  if (typeof representation !== 'object' || representation === null)
    return `${at} is not an object.`;
  const { __typename: typename } = representation as Record<string, unknown>;
  const key = typeof typename === 'string' ? keys.get(typename) : undefined;
  if (!key) return `${at} does not name an entity of this subgraph in __typename.`;
  for (const name of key) {
    const value = (representation as Record<string, unknown>)[name];
    if (typeof value !== 'string' || value === '') {
      return `${at} (${String(typename)}) needs its key field "${name}" as a non-empty string.`;
    }
  }
  return undefined;
}
