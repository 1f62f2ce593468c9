import { ETHERSCAN_MESSAGES } from './errors.js';

/*
 * The fake Etherscan Sourcify imports verified sources from. It knows the fixture's contracts; a
 * failure set through the control API makes its next fetches fail the ways the real one does.
 */

/**
 * How a fetch from Etherscan fails, as lib-sourcify tells them apart:
 * - `unreachable`: no answer (`etherscan_network_error`);
 * - `http-error`: Etherscan answers 503 (`etherscan_http_error`);
 * - `invalid-api-key`: Etherscan refuses the API key, the caller's or Sourcify's own
 *   (`etherscan_api_error`, "Result message: Invalid API Key");
 * - `rate-limit`: Etherscan's rate limit for the key (`etherscan_rate_limit`).
 */
export const ETHERSCAN_FAILURES = [
  'unreachable',
  'http-error',
  'invalid-api-key',
  'rate-limit',
] as const;

export type EtherscanFailure = (typeof ETHERSCAN_FAILURES)[number];

/** The failure in force, for the control API. */
export interface ActiveEtherscanFailure {
  failure: EtherscanFailure;
  /** Fetches left to fail; null until cleared. */
  remaining: number | null;
}

/** The status Etherscan answers with an `http-error`. */
const ETHERSCAN_HTTP_ERROR_STATUS = 503;

/**
 * What Sourcify answers for a failed fetch: the session API's status and message (its error
 * handler's `{ error, message }`), and APIv2's `customCode` with the same status and message.
 * Neither sends `Retry-After` for the rate limit.
 */
export function etherscanFailureAnswer(failure: EtherscanFailure): {
  status: 502 | 429;
  message: string;
  v2Code: 'etherscan_request_failed' | 'etherscan_limit';
} {
  switch (failure) {
    case 'unreachable':
      return {
        status: 502,
        message: ETHERSCAN_MESSAGES.etherscanNetworkError,
        v2Code: 'etherscan_request_failed',
      };
    case 'http-error':
      return {
        status: 502,
        message: ETHERSCAN_MESSAGES.etherscanHttpError(ETHERSCAN_HTTP_ERROR_STATUS),
        v2Code: 'etherscan_request_failed',
      };
    case 'invalid-api-key':
      return {
        status: 502,
        message: ETHERSCAN_MESSAGES.etherscanInvalidApiKey,
        v2Code: 'etherscan_request_failed',
      };
    case 'rate-limit':
      return {
        status: 429,
        message: ETHERSCAN_MESSAGES.etherscanRateLimited,
        v2Code: 'etherscan_limit',
      };
  }
}

/** Checks an untrusted failure name; throws a TypeError saying what is wrong. */
export function parseEtherscanFailure(value: unknown): EtherscanFailure {
  const failure = ETHERSCAN_FAILURES.find((candidate) => candidate === value);
  if (!failure) {
    throw new TypeError(`etherscan.failure must be one of ${ETHERSCAN_FAILURES.join(', ')}`);
  }
  return failure;
}

/** The fake Etherscan's failure in force, counted per fetch. Inputs must be parsed. */
export class FakeEtherscan {
  #active: ActiveEtherscanFailure | null = null;

  /** Makes the next `times` fetches (null: every fetch until cleared) fail; null clears. */
  set(failure: EtherscanFailure | null, times: number | null): void {
    this.#active = failure === null ? null : { failure, remaining: times };
  }

  /** The failure of one fetch, counted against `times`; null when the fetch succeeds. */
  fetch(): EtherscanFailure | null {
    const active = this.#active;
    if (!active) return null;
    if (active.remaining !== null) {
      active.remaining -= 1;
      if (active.remaining <= 0) this.#active = null;
    }
    return active.failure;
  }

  get active(): ActiveEtherscanFailure | null {
    return this.#active ? { ...this.#active } : null;
  }
}
