import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidInputError } from '../../errors/invalid-input-error.js';
import { RateLimitedError } from '../../errors/rate-limited-error.js';
import { isUpstreamError, type UpstreamEndpoint } from '../../errors/upstream-error.js';
import { UpstreamUnavailableError } from '../../errors/upstream-unavailable-error.js';
import { VerificationRejectedError } from '../../errors/verification-rejected-error.js';
import { toEnumValue } from '../enum-value.js';
import { parseJsonBody, type UpstreamClient, type UpstreamResponse } from '../upstream-client.js';
import type {
  Contract,
  VerificationOutcome,
  VerificationResult,
  VerificationStatus,
  VerifyContractInput,
} from './model.js';
import { retryAfterSeconds, safeJson, upstreamMessage } from './upstream-answer.js';
import {
  type WireV2Contract as V2Contract,
  type WireV2Job as V2Job,
  WireV2Accepted,
  WireV2Contract,
  WireV2Error,
  WireV2Job,
} from './wire-v2.js';

export interface ApiV2Options {
  /** How long `verify` polls a job before it answers "pending". */
  readonly waitMs: number;
  /** First pause between polls; each pause is 1.5 times the last, up to 2 s. */
  readonly pollIntervalMs: number;
}

/** The HTTP status reported for an APIv2 job that ran and failed (the poll itself answered 200). */
const FAILED_JOB_STATUS = 422;

/**
 * Sourcify APIv2: a verification is a job. `POST /v2/verify/etherscan/{chainId}/{address}` answers
 * 202 with its id, `GET /v2/verify/{id}` reports it, `GET /v2/contract/{chainId}/{address}` looks
 * a verified contract up.
 */
export function createApiV2(client: UpstreamClient, { waitMs, pollIntervalMs }: ApiV2Options) {
  async function contract(
    chainId: string,
    address: string,
    requestId: string | undefined,
  ): Promise<Contract | null> {
    const response = await client.get(`/v2/contract/${chainId}/${address}`, { requestId });
    if (response.status === 404) {
      // Not verified: Sourcify answers 404 with the match fields null.
      return null;
    }
    if (response.status >= 200 && response.status < 300) {
      const wire = parseJsonBody(response, WireV2Contract);
      return wire.match === null ? null : toContract(wire);
    }
    throw failureOf(response, undefined);
  }

  async function job(id: string, requestId: string | undefined): Promise<V2Job | null> {
    const response = await client.get(`/v2/verify/${encodeURIComponent(id)}`, { requestId });
    if (response.status === 404 || response.status === 400) return null;
    if (response.status >= 200 && response.status < 300) return parseJsonBody(response, WireV2Job);
    throw failureOf(response, undefined);
  }

  /** What a finished job means for the caller; a pending one is reported as pending. */
  async function outcomeOf(
    state: V2Job,
    apiKey: string | undefined,
    requestId: string | undefined,
  ): Promise<VerificationOutcome> {
    if (!state.isJobCompleted) {
      return {
        kind: 'pending',
        verificationId: state.verificationId,
        startedAt: state.jobStartTime,
      };
    }
    if (state.error) {
      if (state.error.customCode === 'already_verified' && state.contract) {
        return alreadyVerified(state.contract.chainId, state.contract.address, requestId);
      }
      throw errorFor(
        state.error,
        FAILED_JOB_STATUS,
        null,
        apiKey,
        jobEndpoint(state.verificationId),
      );
    }
    if (!state.contract) {
      throw new VerificationRejectedError(
        'The verification job finished without a result.',
        FAILED_JOB_STATUS,
      );
    }
    return resultOf(state.verificationId, toContract(state.contract), false);
  }

  async function alreadyVerified(
    chainId: string,
    address: string,
    requestId: string | undefined,
  ): Promise<VerificationResult> {
    const existing = await contract(chainId, address, requestId);
    return resultOf(existing?.matchId ?? `${chainId}:${address}`, existing, true);
  }

  return {
    contract,

    /** The current state of a job, or null for an id the service does not know. */
    async jobOutcome(
      id: string,
      requestId: string | undefined,
    ): Promise<VerificationOutcome | null> {
      const state = await job(id, requestId);
      return state ? outcomeOf(state, undefined, requestId) : null;
    },

    async verify(
      input: VerifyContractInput,
      requestId: string | undefined,
    ): Promise<VerificationOutcome> {
      const apiKey = input.apiKey ?? undefined;
      const response = await client.postJson(
        `/v2/verify/etherscan/${input.chainId}/${input.address}`,
        apiKey ? { apiKey } : {},
        { requestId },
      );
      if (response.status === 409) {
        const body = WireV2Error.safeParse(safeJson(response.text));
        if (body.success && body.data.customCode === 'already_verified') {
          return alreadyVerified(input.chainId, input.address, requestId);
        }
      }
      if (response.status !== 202 && response.status !== 200) throw failureOf(response, apiKey);
      const { verificationId } = parseJsonBody(response, WireV2Accepted);

      const deadline = Date.now() + waitMs;
      let pause = pollIntervalMs;
      for (;;) {
        await sleep(Math.max(0, Math.min(pause, deadline - Date.now())));
        let state: V2Job | null;
        try {
          state = await job(verificationId, requestId);
        } catch (error) {
          // The job was accepted: a failing poll must not lose it. The client polls later.
          if (!isUpstreamError(error)) throw error;
          return { kind: 'pending', verificationId, startedAt: null };
        }
        if (state?.isJobCompleted) return outcomeOf(state, apiKey, requestId);
        if (Date.now() >= deadline) {
          return { kind: 'pending', verificationId, startedAt: state?.jobStartTime ?? null };
        }
        pause = Math.min(pause * 1.5, 2_000);
      }
    },
  };
}

/**
 * An APIv2 answer as a `VerificationResult`: the match, address, chain and time APIv2 reports;
 * the fields only the session API reports are null, not made up.
 */
function resultOf(
  verificationId: string,
  contract: Contract | null,
  alreadyVerified: boolean,
): VerificationResult {
  return {
    kind: 'result',
    alreadyVerified,
    unused: [],
    contracts: contract
      ? [
          {
            verificationId,
            compiledPath: null,
            name: null,
            compilerVersion: null,
            address: contract.address,
            chainId: contract.chainId,
            files: null,
            status: contract.match ?? 'UNKNOWN',
            statusMessage: null,
            storageTimestamp: contract.verifiedAt,
          },
        ]
      : [],
  };
}

const MATCHES = ['EXACT_MATCH', 'MATCH'] as const;

/** APIv2's `exact_match` / `match` as the graph's PERFECT / PARTIAL. */
function toStatus(match: string | null): VerificationStatus | null {
  if (match === null) return null;
  const value = toEnumValue(MATCHES, match);
  return value === 'EXACT_MATCH' ? 'PERFECT' : value === 'MATCH' ? 'PARTIAL' : 'UNKNOWN';
}

function toContract(wire: V2Contract): Contract {
  return {
    chainId: wire.chainId,
    address: wire.address,
    match: toStatus(wire.match),
    creationMatch: toStatus(wire.creationMatch),
    runtimeMatch: toStatus(wire.runtimeMatch),
    verifiedAt: wire.verifiedAt,
    matchId: wire.matchId,
  };
}

/** The error a non-2xx APIv2 answer stands for. */
function failureOf(response: UpstreamResponse, apiKey: string | undefined): Error {
  const body = WireV2Error.safeParse(safeJson(response.text));
  if (!body.success) {
    const { status, endpoint } = response;
    if (status === 429) {
      return new RateLimitedError(
        'The verification service is rate limiting requests; try again later.',
        retryAfterSeconds(response.headers.get('retry-after')),
      );
    }
    return status >= 400 && status < 500
      ? new VerificationRejectedError(
          `The verification service refused the request (HTTP ${status}).`,
          status,
        )
      : new UpstreamUnavailableError(endpoint, `it answered HTTP ${status}`, { status });
  }
  return errorFor(
    body.data,
    response.status,
    response.headers.get('retry-after'),
    apiKey,
    response.endpoint,
  );
}

const jobEndpoint = (id: string): UpstreamEndpoint => ({
  upstream: 'verification service',
  method: 'GET',
  path: `/v2/verify/${id}`,
});

/** APIv2's error codes as the graph's error types. */
function errorFor(
  error: { customCode: string; message: string | null; errorId: string | null },
  status: number,
  retryAfter: string | null,
  apiKey: string | undefined,
  endpoint: UpstreamEndpoint,
): Error {
  const details = { errorId: error.errorId ?? undefined, upstreamCode: error.customCode };
  const message =
    upstreamMessage(error.message, apiKey) ?? `Verification failed: ${error.customCode}.`;
  switch (error.customCode) {
    case 'unsupported_chain':
      return new InvalidInputError('chainId', message, details);
    case 'invalid_parameter':
      return new InvalidInputError(fieldNamedIn(message), message, details);
    case 'etherscan_limit':
    case 'duplicate_verification_request':
      return new RateLimitedError(message, retryAfterSeconds(retryAfter), details);
    case 'etherscan_request_failed':
    case 'internal_error':
      return new UpstreamUnavailableError(endpoint, message, { ...details, status });
    default:
      return status >= 500
        ? new UpstreamUnavailableError(endpoint, message, { ...details, status })
        : new VerificationRejectedError(message, status, details);
  }
}

function fieldNamedIn(message: string): string {
  for (const field of ['address', 'chainId', 'apiKey']) {
    if (message.includes(field)) return field;
  }
  return 'input';
}
