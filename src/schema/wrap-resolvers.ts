import {
  defaultFieldResolver,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLObjectType,
  type GraphQLSchema,
  isObjectType,
} from 'graphql';

/** Makes a field's new resolver from its current one; undefined leaves the field as it is. */
export type ResolverWrapper<Context> = (
  resolve: GraphQLFieldResolver<unknown, Context>,
  field: GraphQLField<unknown, Context>,
  type: GraphQLObjectType,
) => GraphQLFieldResolver<unknown, Context> | undefined;

/**
 * Gives every field of every object type of `schema` (introspection's aside) the resolver `wrap`
 * makes of its own, the default property read included. Done once, when the schema is built, so
 * that a concern applies to every field without each field declaring it.
 */
export function wrapResolvers<Context>(
  schema: GraphQLSchema,
  wrap: ResolverWrapper<Context>,
): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const current = (field.resolve ?? defaultFieldResolver) as GraphQLFieldResolver<
        unknown,
        Context
      >;
      const wrapped = wrap(current, field as GraphQLField<unknown, Context>, type);
      if (wrapped) field.resolve = wrapped;
    }
  }
  return schema;
}
