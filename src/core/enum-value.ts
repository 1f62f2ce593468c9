/** What any value an upstream adds after this gateway was written maps to. */
export type Unknown = 'UNKNOWN';

/**
 * Maps a wire value such as `degraded_performance` or `extra-file-input-bug` to its GraphQL enum
 * value (`DEGRADED_PERFORMANCE`, `EXTRA_FILE_INPUT_BUG`), or to `UNKNOWN`: an upstream adding a
 * value must never turn into a query error.
 */
export function toEnumValue<const Known extends string>(
  known: readonly Known[],
  wire: string,
): Known | Unknown {
  const value = wire.toUpperCase().replaceAll('-', '_');
  return (known as readonly string[]).includes(value) ? (value as Known) : 'UNKNOWN';
}
