/**
 * The `extensions.code` of every error in a GraphQL answer (one result or a batch), in order;
 * `INTERNAL_SERVER_ERROR` for an error without one.
 */
export function errorCodesOf(result: unknown): string[] {
  const codes: string[] = [];
  for (const single of Array.isArray(result) ? result : [result]) {
    if (!single || typeof single !== 'object' || !('errors' in single)) continue;
    const errors = (single as { errors?: { extensions?: { code?: unknown } }[] }).errors ?? [];
    for (const error of errors) {
      const code = error.extensions?.code;
      codes.push(typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR');
    }
  }
  return codes;
}
