import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidInputError } from '../../errors/invalid-input-error.js';
import { UpstreamError } from '../../errors/upstream-error.js';
import { UpstreamUnavailableError } from '../../errors/upstream-unavailable-error.js';
import { parseJsonBody, type UpstreamClient } from '../upstream-client.js';
import { failureOf } from './apiv2-errors.js';
import type { JobOutcomes } from './job-outcome.js';
import type {
  Chain,
  Contract,
  VerificationOutcome,
  VerifyBySimilarityInput,
  VerifyContractInput,
  VerifyFromMetadataInput,
  VerifyFromSourceInput,
} from './model.js';
import { bodyAs } from './upstream-answer.js';
import { toContract } from './v2-model.js';
import {
  WireV2Accepted,
  WireV2Contract,
  WireV2ContractList,
  WireV2Error,
  WireV2Job,
} from './wire-v2.js';

export interface ApiV2Options {
  /** How long a verification polls its job before it answers "pending". */
  readonly waitMs: number;
  /** First pause between polls; each pause is 1.5 times the last, up to 2 s. */
  readonly pollIntervalMs: number;
  /** What a job means for the caller. */
  readonly outcomes: JobOutcomes;
  /** The service's entry for a chain, when its chain list has one: to explain its failures. */
  readonly chainOf: (chainId: string, requestId: string | undefined) => Promise<Chain | undefined>;
  /**
   * Aborted when the gateway shuts down: a verification polling its job stops waiting and
   * answers "pending" with the job id at once, so that the accepted job is never lost.
   */
  readonly closing: AbortSignal;
}

/** A contract lookup's answer: the contract (null: not verified), its ETag and its body's size. */
export interface LookupAnswer {
  readonly contract: Contract | null;
  readonly etag: string | null;
  readonly bytes: number;
}

export type SourcifyApiV2 = ReturnType<typeof createApiV2>;

/**
 * Sourcify APIv2: a verification is a job. `POST /v2/verify/{etherscan/,metadata/,similarity/,}{chainId}/{address}`
 * answers 202 with its id, `GET /v2/verify/{id}` reports it; `GET /v2/contract/{chainId}/{address}`,
 * `/v2/contract/all-chains/{address}` and `/v2/contracts/{chainId}` look verified contracts up.
 */
export function createApiV2(
  client: UpstreamClient,
  { waitMs, pollIntervalMs, outcomes, chainOf, closing }: ApiV2Options,
) {
  /**
   * `GET /v2/contract/{chainId}/{address}` with the compilation fields; with `etag`, a conditional
   * request whose 304 answers "unchanged" without a body.
   */
  async function lookUp(
    chainId: string,
    address: string,
    etag: string | null,
    requestId: string | undefined,
  ): Promise<LookupAnswer | 'unchanged'> {
    const response = await client.get(`/v2/contract/${chainId}/${address}`, {
      requestId,
      searchParams: { fields: COMPILATION_FIELDS },
      ...(etag ? { headers: { 'if-none-match': etag } } : {}),
    });
    if (response.status === 304 && etag) return 'unchanged';
    const bytes = Buffer.byteLength(response.text);
    if (response.status >= 200 && response.status < 300) {
      const wire = parseJsonBody(response, WireV2Contract);
      return {
        contract: wire.match === null ? null : toContract(wire),
        etag: response.headers.get('etag'),
        bytes,
      };
    }
    // Not verified: Sourcify answers 404 with the contract, its match fields null. Any other 404
    // (unsupported_chain on sourcify-server 3.9.1, a server without APIv2) is a failure.
    if (response.status === 404 && bodyAs(WireV2Contract, response.text)) {
      return { contract: null, etag: null, bytes };
    }
    const error = bodyAs(WireV2Error, response.text);
    if (error?.customCode === 'internal_error') {
      // Sourcify fails this way on every lookup on a chain it has deprecated: say so.
      const chain = await chainOf(chainId, requestId);
      if (chain && !chain.supported) {
        const said = error.message ?? 'no message';
        throw new UpstreamUnavailableError(
          response.endpoint,
          `it failed with an internal error (internal_error: "${said}") on chain ${chainId} (${chain.name}), which it lists as unsupported: Sourcify fails this way on the chains it has deprecated.`,
          { status: response.status, errorId: error.errorId ?? undefined },
        );
      }
    }
    throw failureOf(response);
  }

  /** A list of contracts (`{ results }`); a 404 with an empty list is no contract. */
  async function list(
    path: string,
    searchParams: Record<string, string> | undefined,
    requestId: string | undefined,
  ): Promise<Contract[]> {
    const response = await client.get(path, { requestId, searchParams });
    if (response.status >= 200 && response.status < 300) {
      return parseJsonBody(response, WireV2ContractList).results.map(toContract);
    }
    // Verified on no chain: all-chains answers 404 with an empty list.
    const empty = bodyAs(WireV2ContractList, response.text);
    if (response.status === 404 && empty) return empty.results.map(toContract);
    throw failureOf(response);
  }

  async function job(id: string, requestId: string | undefined): Promise<WireV2Job | null> {
    const response = await client.get(`/v2/verify/${encodeURIComponent(id)}`, { requestId });
    if (response.status >= 200 && response.status < 300) return parseJsonBody(response, WireV2Job);
    const error = bodyAs(WireV2Error, response.text);
    if (error?.customCode === 'job_not_found') return null;
    if (error?.customCode === 'invalid_parameter') {
      // Sourcify's job ids are UUIDs; anything else is refused by its validator.
      throw new InvalidInputError(
        'id',
        `id is not a verification job id: ${error.message ?? 'the service refused it'}`,
        { errorId: error.errorId ?? undefined },
      );
    }
    throw failureOf(response);
  }

  /**
   * Submits a verification and waits for its job up to `waitMs`: the outcome, or "pending" with
   * the job id. A contract already verified is answered with its existing match. `body` is sent as
   * JSON, which leaves out its fields that are undefined.
   */
  async function submit(
    route: 'etherscan/' | 'metadata/' | 'similarity/' | '',
    { chainId, address }: { chainId: string; address: string },
    body: unknown,
    requestId: string | undefined,
    apiKey?: string,
  ): Promise<VerificationOutcome> {
    const path = `/v2/verify/${route}${chainId}/${address}`;
    const response = await client.postJson(path, body, { requestId });
    if (
      response.status === 409 &&
      bodyAs(WireV2Error, response.text)?.customCode === 'already_verified'
    ) {
      return outcomes.alreadyVerified(chainId, address, requestId, null);
    }
    if (response.status !== 202 && response.status !== 200) throw failureOf(response, apiKey);
    const { verificationId } = parseJsonBody(response, WireV2Accepted);

    const deadline = Date.now() + waitMs;
    let pause = pollIntervalMs;
    let last: WireV2Job | null = null;
    const stillPending = () =>
      last
        ? outcomes.outcomeOf(last, apiKey, requestId)
        : outcomes.pending(verificationId, null, null);
    for (;;) {
      // Rejects at once when the gateway is closing, or was before it began.
      const paused = await sleep(Math.max(0, Math.min(pause, deadline - Date.now())), true, {
        signal: closing,
      }).catch(() => false);
      if (!paused) return stillPending();
      let state: WireV2Job | null;
      try {
        state = await job(verificationId, requestId);
      } catch (error) {
        // The job was accepted: a failing poll must not lose it. The client polls later.
        if (!(error instanceof UpstreamError)) throw error;
        return stillPending();
      }
      if (state) last = state;
      if (state?.isJobCompleted) return outcomes.outcomeOf(state, apiKey, requestId);
      if (Date.now() >= deadline) return stillPending();
      pause = Math.min(pause * 1.5, 2_000);
    }
  }

  return {
    lookUp,
    job,

    /** Every chain the address is verified on (`GET /v2/contract/all-chains/{address}`). */
    onAllChains: (address: string, requestId: string | undefined) =>
      list(`/v2/contract/all-chains/${address}`, undefined, requestId),

    /** Verified contracts of a chain, newest first, after the match `afterMatchId`. */
    verifiedContracts: (
      chainId: string,
      { limit, afterMatchId }: { limit: number; afterMatchId: string | null },
      requestId: string | undefined,
    ) =>
      list(
        `/v2/contracts/${chainId}`,
        {
          sort: 'desc',
          limit: String(limit),
          ...(afterMatchId === null ? {} : { afterMatchId }),
        },
        requestId,
      ),

    /** From the block explorer (`POST /v2/verify/etherscan/{chainId}/{address}`). */
    verify(input: VerifyContractInput, requestId: string | undefined) {
      const apiKey = input.apiKey || undefined;
      return submit('etherscan/', input, { apiKey }, requestId, apiKey);
    },

    /** From a standard JSON input (`POST /v2/verify/{chainId}/{address}`). */
    verifyFromSource: (input: VerifyFromSourceInput, requestId: string | undefined) =>
      submit(
        '',
        input,
        {
          stdJsonInput: input.stdJsonInput,
          compilerVersion: input.compilerVersion,
          contractIdentifier: input.contractIdentifier,
          creationTransactionHash: input.creationTransactionHash ?? undefined,
        },
        requestId,
      ),

    /** From metadata.json and its sources (`POST /v2/verify/metadata/{chainId}/{address}`). */
    verifyFromMetadata: (input: VerifyFromMetadataInput, requestId: string | undefined) =>
      submit(
        'metadata/',
        input,
        {
          metadata: input.metadata,
          sources: input.sources,
          creationTransactionHash: input.creationTransactionHash ?? undefined,
        },
        requestId,
      ),

    /**
     * By similarity (`POST /v2/verify/similarity/{chainId}/{address}`): the service tries the
     * sources of verified contracts whose runtime bytecode resembles this one's.
     */
    verifyBySimilarity: (input: VerifyBySimilarityInput, requestId: string | undefined) =>
      submit(
        'similarity/',
        input,
        { creationTransactionHash: input.creationTransactionHash ?? undefined },
        requestId,
      ),
  };
}

/** The contract lookup's `fields`: the minimal contract, and how it was compiled. */
const COMPILATION_FIELDS = [
  'compilation.name',
  'compilation.compilerVersion',
  'compilation.fullyQualifiedName',
].join(',');
