import type { ExpectedError } from '../../errors/expected-error.js';
import { ExplorerUnavailableError } from '../../errors/explorer-unavailable-error.js';
import { InvalidInputError } from '../../errors/invalid-input-error.js';

/** Etherscan's answer to an API key it does not accept, as Sourcify relays it. */
const REJECTED_KEY = /invalid api key/i;

/**
 * What Sourcify's report of a failed import from the explorer (session API 502, APIv2
 * `etherscan_request_failed`) means for the caller. A key the explorer refuses is the caller's to
 * fix; anything else (the explorer unreachable or failing) is worth a retry later. `message` is
 * Sourcify's, already scrubbed of the key.
 */
export function explorerFailure(
  message: string | undefined,
  status: number,
  apiKey: string | undefined,
  errorId: string | undefined,
): ExpectedError {
  const said = message ?? `it answered HTTP ${status}`;
  if (message !== undefined && REJECTED_KEY.test(message)) {
    return new InvalidInputError(
      'apiKey',
      apiKey
        ? `The block explorer rejected your apiKey: check it, or leave apiKey out to use the verification service's own key. The service said: ${said}`
        : `The block explorer rejected the verification service's own API key: send your own explorer API key as apiKey. The service said: ${said}`,
      { errorId },
    );
  }
  return new ExplorerUnavailableError(said, status, { errorId });
}
