/**
 * Redis did not answer usefully (not connected, timed out, or refused the command). It never
 * reaches a client: whoever meets it does the work alone, as a gateway without Redis would.
 */
export class RedisUnavailableError extends Error {
  override readonly name = 'RedisUnavailableError';
}
