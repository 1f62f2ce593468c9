import type { DocumentNode, OperationDefinitionNode } from 'graphql';

/** The operation of `document` that runs: the one named `operationName`, or the only one. */
export function executedOperation(
  document: DocumentNode,
  operationName: string | null | undefined,
): { name: string | undefined; type: string } {
  const operation = document.definitions.find(
    (definition): definition is OperationDefinitionNode =>
      definition.kind === 'OperationDefinition' &&
      (!operationName || definition.name?.value === operationName),
  );
  return {
    name: (operationName ?? operation?.name?.value)?.slice(0, 64),
    type: operation?.operation ?? 'unknown',
  };
}
