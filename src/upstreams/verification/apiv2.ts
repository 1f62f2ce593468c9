import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidInputError } from '../../errors/invalid-input-error.js';
import { RateLimitedError } from '../../errors/rate-limited-error.js';
import { isUpstreamError, type UpstreamEndpoint } from '../../errors/upstream-error.js';
import { UpstreamUnavailableError } from '../../errors/upstream-unavailable-error.js';
import { VerificationRejectedError } from '../../errors/verification-rejected-error.js';
import { toEnumValue } from '../enum-value.js';
import { parseJsonBody, type UpstreamClient, type UpstreamResponse } from '../upstream-client.js';
import { explorerFailure } from './explorer-failure.js';
import type {
  Chain,
  Contract,
  VerificationOutcome,
  VerificationResult,
  VerificationStatus,
  VerifyContractInput,
} from './model.js';
import {
  isRouteNotFound,
  retryAfterSeconds,
  safeJson,
  upstreamMessage,
} from './upstream-answer.js';
import { WireErrorBody } from './wire.js';
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
  /** The service's entry for a chain, when its chain list has one: to explain its failures. */
  readonly chainOf?: (chainId: string, requestId: string | undefined) => Promise<Chain | undefined>;
  /**
   * Aborted when the gateway shuts down: a verification polling its job stops waiting and
   * answers "pending" with the job id at once, so that the accepted job is never lost.
   */
  readonly closing?: AbortSignal;
}

/** The HTTP status reported for an APIv2 job that ran and failed (the poll itself answered 200). */
const FAILED_JOB_STATUS = 422;

/**
 * Sourcify APIv2: a verification is a job. `POST /v2/verify/etherscan/{chainId}/{address}` answers
 * 202 with its id, `GET /v2/verify/{id}` reports it, `GET /v2/contract/{chainId}/{address}` looks
 * a verified contract up.
 */
export function createApiV2(
  client: UpstreamClient,
  { waitMs, pollIntervalMs, chainOf, closing }: ApiV2Options,
) {
  async function contract(
    chainId: string,
    address: string,
    requestId: string | undefined,
  ): Promise<Contract | null> {
    const response = await client.get(`/v2/contract/${chainId}/${address}`, {
      requestId,
      searchParams: { fields: COMPILATION_FIELDS },
    });
    if (response.status >= 200 && response.status < 300) {
      const wire = parseJsonBody(response, WireV2Contract);
      return wire.match === null ? null : toContract(wire);
    }
    // Not verified: Sourcify answers 404 with the contract, its match fields null. Any other 404
    // (unsupported_chain on sourcify-server 3.9.1, a server without APIv2) is a failure.
    if (response.status === 404 && WireV2Contract.safeParse(safeJson(response.text)).success) {
      return null;
    }
    const error = WireV2Error.safeParse(safeJson(response.text));
    if (error.success && error.data.customCode === 'internal_error') {
      // Sourcify fails this way on every lookup on a chain it has deprecated: say so.
      const chain = await chainOf?.(chainId, requestId);
      if (chain && !chain.supported) {
        const said = error.data.message ?? 'no message';
        throw new UpstreamUnavailableError(
          response.endpoint,
          `it failed with an internal error (internal_error: "${said}") on chain ${chainId} (${chain.name}), which it lists as unsupported: Sourcify fails this way on the chains it has deprecated.`,
          { status: response.status, errorId: error.data.errorId ?? undefined },
        );
      }
    }
    throw failureOf(response, undefined);
  }

  async function job(id: string, requestId: string | undefined): Promise<V2Job | null> {
    const response = await client.get(`/v2/verify/${encodeURIComponent(id)}`, { requestId });
    if (response.status >= 200 && response.status < 300) return parseJsonBody(response, WireV2Job);
    const body = WireV2Error.safeParse(safeJson(response.text));
    if (body.success && body.data.customCode === 'job_not_found') return null;
    if (body.success && body.data.customCode === 'invalid_parameter') {
      // Sourcify's job ids are UUIDs; anything else is refused by its validator.
      throw new InvalidInputError(
        'id',
        `id is not a verification job id: ${body.data.message ?? 'the service refused it'}`,
        { errorId: body.data.errorId ?? undefined },
      );
    }
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
        if (closing?.aborted) return { kind: 'pending', verificationId, startedAt: null };
        const paused = await sleep(Math.max(0, Math.min(pause, deadline - Date.now())), true, {
          ...(closing ? { signal: closing } : {}),
        }).catch(() => false);
        if (!paused) return { kind: 'pending', verificationId, startedAt: null };
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

/** The contract lookup's `fields`: the minimal contract, and how it was compiled. */
const COMPILATION_FIELDS = [
  'compilation.name',
  'compilation.compilerVersion',
  'compilation.fullyQualifiedName',
].join(',');

/**
 * An APIv2 answer as a `VerificationResult`: the match, address, chain and time APIv2 reports,
 * and the compilation when the contract was looked up (an already verified one); the fields only
 * the session API reports are null, not made up.
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
            compiledPath: contract.compilation?.compiledPath ?? null,
            name: contract.compilation?.name ?? null,
            compilerVersion: contract.compilation?.compilerVersion ?? null,
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
    compilation: wire.compilation
      ? {
          compilerVersion: wire.compilation.compilerVersion,
          name: wire.compilation.name,
          compiledPath: pathOf(wire.compilation.fullyQualifiedName),
        }
      : null,
  };
}

/** `contracts/Token.sol` of `contracts/Token.sol:Token`. */
function pathOf(fullyQualifiedName: string | null): string | null {
  const colon = fullyQualifiedName?.lastIndexOf(':') ?? -1;
  return fullyQualifiedName && colon > 0 ? fullyQualifiedName.slice(0, colon) : null;
}

/** The error a non-2xx APIv2 answer stands for. */
function failureOf(response: UpstreamResponse, apiKey: string | undefined): Error {
  const body = WireV2Error.safeParse(safeJson(response.text));
  if (!body.success) {
    const { status, endpoint } = response;
    if (isRouteNotFound(response)) {
      return new UpstreamUnavailableError(
        endpoint,
        'it has no such route (HTTP 404 page): the server has no APIv2, which the gateway needs for this. Point VERIFY_BASE_URL at a Sourcify server that has APIv2.',
        { status },
      );
    }
    // Not an APIv2 error: perhaps Sourcify's generic `{ error, message }`, whose words are kept.
    const other = WireErrorBody.safeParse(safeJson(response.text));
    const said = upstreamMessage(
      other.success ? (other.data.message ?? other.data.error) : undefined,
      apiKey,
    );
    if (status === 429) {
      return new RateLimitedError(
        said ?? 'The verification service is rate limiting requests; try again later.',
        retryAfterSeconds(response.headers.get('retry-after')),
      );
    }
    return status >= 400 && status < 500
      ? new VerificationRejectedError(
          said ?? `The verification service refused the request (HTTP ${status}).`,
          status,
        )
      : new UpstreamUnavailableError(
          endpoint,
          said ? `it answered HTTP ${status}: ${said}` : `it answered HTTP ${status}`,
          { status },
        );
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
  const said = upstreamMessage(error.message, apiKey);
  const message = said ?? `Verification failed: ${error.customCode}.`;
  switch (error.customCode) {
    case 'unsupported_chain':
      return new InvalidInputError('chainId', message, details);
    case 'invalid_parameter':
      return new InvalidInputError(fieldNamedIn(message), message, details);
    case 'etherscan_limit':
    case 'duplicate_verification_request':
      return new RateLimitedError(message, retryAfterSeconds(retryAfter), details);
    case 'etherscan_request_failed':
      return explorerFailure(said, status, apiKey, details.errorId);
    case 'internal_error':
      return new UpstreamUnavailableError(
        endpoint,
        `it failed with an internal error (internal_error): ${message}`,
        { ...details, status },
      );
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
