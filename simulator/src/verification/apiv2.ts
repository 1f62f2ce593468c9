import { randomUUID } from 'node:crypto';
import { jsonResponse } from '../json-response.js';
import type { SimulatorResponse, UpstreamRequest } from '../upstream.js';
import { parseAddress } from './address.js';
import { type EtherscanFailure, etherscanFailureAnswer } from './etherscan.js';
import type { VerifiableContract } from './fixture.js';
import { type MatchStorage, type StoredMatch, storageKey } from './match-storage.js';
import type { ReceivedVerification } from './received-log.js';
import { mediaType, readJsonRequestBody, sent } from './request-body.js';
import type {
  SourcifyChain,
  SourcifyMatchLevel,
  SourcifyV2Compilation,
  SourcifyV2Contract,
  SourcifyV2ExternalVerifications,
  SourcifyV2Job,
  SourcifyV2JobError,
  SourcifyVerificationStatus,
} from './types.js';
import {
  defaultRejectionMessage,
  missingImportErrors,
  SOURCIFY_V2_MESSAGES,
  V2_REJECTION_STATUS,
  type V2JobErrorCode,
  type V2RejectCode,
  v2Error,
  v2ErrorBody,
} from './v2-errors.js';
import { createV2Lookups } from './v2-lookups.js';
import {
  type ActiveV2Outcome,
  type V2Outcome,
  V2OutcomeTable,
  type V2OutcomeTarget,
} from './v2-outcomes.js';
import {
  ADDRESS_SCHEMA,
  CHAIN_ID_SCHEMA,
  decodeParam,
  isRecord,
  levelOf,
  paramIssues,
  unverified,
  VERIFICATION_ID_SCHEMA,
  wholeSeconds,
} from './v2-shapes.js';
import { judgeSimilarity, similarityBodyIssue } from './v2-similarity.js';
import {
  judgeSources,
  type SourceMethod,
  type SourceVerdict,
  sourceBodyIssue,
} from './v2-sources.js';

/*
 * Sourcify's APIv2 over the same fake explorer, chains and match storage as the session API:
 *
 * - `POST /v2/verify/etherscan/{chainId}/{address}` `{ apiKey? }` → 202 `{ verificationId }`
 * - `POST /v2/verify/similarity/{chainId}/{address}` `{ creationTransactionHash? }` → 202
 * - `GET /v2/verify/{verificationId}` → 200 the job (pending or completed), 404 `job_not_found`
 * - `GET /v2/contract/{chainId}/{address}` → 200 the match, 404 with null match fields
 *
 * Checks run in the real server's order: body-parser, the OpenAPI validator (path formats, body
 * schema, media type → `invalid_json` / `invalid_parameter`; the first problem only),
 * validateChainId, validateAddress, checkIfAlreadyVerified, checkIfJobIsAlreadyRunning, then the
 * Etherscan fetch, which Sourcify does before answering 202, so Etherscan's errors are
 * synchronous too. A chain Sourcify lists as unsupported (deprecated, e.g. 5) passes
 * validateChainId and then fails with 500 `internal_error`, on the verification and the lookup
 * alike (a Sourcify bug, in 3.9.1 and 3.12.1). Jobs complete lazily: a job is settled by the first
 * observation (any request to the upstream, `jobs()`) at or after its due time, and its finish
 * time is that due time.
 */

/** How long a job takes by default: about a fast real compile. */
export const DEFAULT_JOB_DELAY_MS = 150;

export type VerificationJobState = 'pending' | 'succeeded' | 'failed';

/** A verification job, for tests and the control API (no API key: received has it). */
export interface VerificationJobInfo {
  readonly verificationId: string;
  readonly chainId: string;
  /** Checksummed. */
  readonly address: string;
  readonly state: VerificationJobState;
  /** When succeeded. */
  readonly match: SourcifyMatchLevel | null;
  /** When failed: the job's `error.customCode`. */
  readonly errorCode: string | null;
  /** ISO 8601 with milliseconds (the API shows whole seconds). */
  readonly startedAt: string;
  readonly finishedAt: string | null;
}

export interface SimulatedApiV2Options {
  /** Jobs kept (the oldest are dropped first, and then answer 404). Default 10,000. */
  jobCapacity?: number;
  /** Default `Date.now`. */
  now?: () => number;
}

/** What APIv2 shares with the session API; functions, since `reset()` replaces the values. */
export interface ApiV2Context {
  chain(chainId: string): SourcifyChain | undefined;
  contract(key: string): VerifiableContract | undefined;
  storage(): MatchStorage;
  record(entry: ReceivedVerification): void;
  /** How the upstream answers a path without a route. */
  notFound(request: UpstreamRequest): SimulatorResponse;
  /** `unsupported_chain`'s status: 404 on sourcify-server 3.9.1, 400 on 3.12.1. */
  unsupportedChainStatus(): 400 | 404;
  /** Fetches the sources from the fake Etherscan: its failure, or null when it answers. */
  fetchFromEtherscan(): EtherscanFailure | null;
}

export interface ApiV2 {
  /** Serves a request whose path (trailing slash removed) is one of APIv2's routes, else null. */
  handle(request: UpstreamRequest, path: string): Promise<SimulatorResponse> | null;
  /** Completes every job that is due. */
  settle(): void;
  /** Oldest first, settled. */
  jobs(): VerificationJobInfo[];
  readonly jobDelayMs: number | null;
  /** Input must be parsed. Pending jobs follow the new delay, counted from their start. */
  setJobDelay(ms: number | null): void;
  /** Inputs must be parsed. */
  setOutcome(target: V2OutcomeTarget, outcome: V2Outcome | null, times: number | null): void;
  outcomes(): ActiveV2Outcome[];
  /** Fails every job that would never complete (stuck) with `job_abandoned`, as Sourcify's reaper does. */
  abandonStuckJobs(): void;
  /** Jobs, outcomes and the delay back to their defaults. */
  reset(): void;
}

interface Job {
  readonly verificationId: string;
  readonly key: string;
  readonly chainId: string;
  readonly address: string;
  /** How it was submitted. */
  readonly method: 'etherscan' | 'similarity' | SourceMethod;
  /** What the explorer gave when the request was accepted, or the contract deployed there. */
  readonly contract: VerifiableContract;
  readonly scripted: { readonly code: V2JobErrorCode; readonly message?: string } | undefined;
  /** What compiling the sent sources gives (source verifications). */
  readonly verdict: SourceVerdict | undefined;
  /** A job that never completes on its own (`{ stuck: true }`). */
  readonly stuck: boolean;
  readonly startedAt: number;
  /** null: never. */
  dueAt: number | null;
  finishedAt: number | null;
  match: StoredMatch | null;
  compilationTime: string | null;
  error: SourcifyV2JobError | null;
}

const VERIFY_ETHERSCAN = /^\/v2\/verify\/etherscan\/([^/]+)\/([^/]+)$/i;
const VERIFY_METADATA = /^\/v2\/verify\/metadata\/([^/]+)\/([^/]+)$/i;
const VERIFY_SIMILARITY = /^\/v2\/verify\/similarity\/([^/]+)\/([^/]+)$/i;
const VERIFY_STD_JSON = /^\/v2\/verify\/([^/]+)\/([^/]+)$/i;
const JOB = /^\/v2\/verify\/([^/]+)$/i;
const CONTRACT_ALL_CHAINS = /^\/v2\/contract\/all-chains\/([^/]+)$/i;
const CONTRACT = /^\/v2\/contract\/([^/]+)\/([^/]+)$/i;
const CONTRACTS = /^\/v2\/contracts\/([^/]+)$/i;

/** Fields `GET /v2/contract` knows, with their sub-fields (validateFieldsAndOmit). */
const CONTRACT_FIELDS: Readonly<Record<string, readonly string[] | null>> = {
  matchId: null,
  creationMatch: null,
  runtimeMatch: null,
  verifiedAt: null,
  abi: null,
  metadata: null,
  sources: null,
  sourceIds: null,
  userdoc: null,
  devdoc: null,
  storageLayout: null,
  transientStorageLayout: null,
  additionalInput: null,
  stdJsonInput: null,
  stdJsonOutput: null,
  proxyResolution: null,
  creationBytecode: [
    'onchainBytecode',
    'recompiledBytecode',
    'sourceMap',
    'linkReferences',
    'cborAuxdata',
    'transformations',
    'transformationValues',
  ],
  runtimeBytecode: [
    'onchainBytecode',
    'recompiledBytecode',
    'sourceMap',
    'linkReferences',
    'cborAuxdata',
    'immutableReferences',
    'transformations',
    'transformationValues',
  ],
  deployment: ['transactionHash', 'blockNumber', 'transactionIndex', 'deployer'],
  compilation: [
    'language',
    'compiler',
    'compilerVersion',
    'compilerSettings',
    'name',
    'fullyQualifiedName',
  ],
  signatures: ['function', 'event', 'error'],
};

function rank(status: SourcifyVerificationStatus | undefined): number {
  if (status === 'perfect') return 2;
  return status === 'partial' ? 1 : 0;
}

export function createSimulatedApiV2(
  context: ApiV2Context,
  options: SimulatedApiV2Options = {},
): ApiV2 {
  const capacity = options.jobCapacity ?? 10_000;
  const now = options.now ?? Date.now;
  if (!Number.isSafeInteger(capacity) || capacity < 1) {
    throw new RangeError('jobCapacity must be a positive integer');
  }
  let jobDelayMs: number | null = DEFAULT_JOB_DELAY_MS;
  /** Oldest first. */
  const jobs = new Map<string, Job>();
  /** Pending jobs by storage key: at most one per contract (duplicates are refused). */
  const pending = new Map<string, Job>();
  /** No pending job is due before this; settling is free until then. */
  let nextDueAt = Number.POSITIVE_INFINITY;
  const updateNextDueAt = (): void => {
    nextDueAt = Number.POSITIVE_INFINITY;
    for (const job of pending.values()) {
      if (job.dueAt !== null && job.dueAt < nextDueAt) nextDueAt = job.dueAt;
    }
  };
  const outcomes = new V2OutcomeTable();
  const lookups = createV2Lookups(context);
  const rejectionStatus = (code: V2RejectCode): number =>
    code === 'unsupported_chain' ? context.unsupportedChainStatus() : V2_REJECTION_STATUS[code];

  const jobError = (code: string, message: string, errorData?: Record<string, unknown>) => ({
    ...v2ErrorBody(code, message),
    ...(errorData === undefined ? {} : { errorData }),
  });

  /** What the worker makes of the explorer's sources; stores a new or better match. */
  const complete = (job: Job, finishedAt: number): void => {
    pending.delete(job.key);
    job.finishedAt = finishedAt;
    const { contract, chainId, address } = job;
    if (job.scripted) {
      const { code, message } = job.scripted;
      job.error = jobError(code, message ?? defaultJobMessage(code, chainId, address));
      return;
    }
    if (job.verdict && !job.verdict.matches) {
      const { code, message, errorData } = job.verdict;
      job.error = jobError(code, message, errorData);
      return;
    }
    const level = levelOf(contract.status);
    if (level !== null) {
      const storage = context.storage();
      if (rank(storage.get(job.key)?.status) >= rank(contract.status)) {
        job.error = jobError('already_verified', SOURCIFY_V2_MESSAGES.jobAlreadyVerified);
        return;
      }
      job.match = storage.store(job.key, contract.status, new Date(finishedAt).toISOString());
      job.compilationTime = String(Math.floor((finishedAt - job.startedAt) * 0.8));
      return;
    }
    if (contract.status === 'extra-file-input-bug') {
      job.error = jobError('extra_file_input_bug', SOURCIFY_V2_MESSAGES.extraFileInputBug);
    } else if (Object.keys(contract.missing ?? {}).length > 0) {
      const compilerErrors = missingImportErrors(Object.keys(contract.missing ?? {}));
      job.error = jobError('compiler_error', SOURCIFY_V2_MESSAGES.compilerError(compilerErrors), {
        compilerErrors,
      });
    } else {
      job.error = jobError('no_match', SOURCIFY_V2_MESSAGES.noMatch);
    }
  };

  const settle = (): void => {
    const time = now();
    if (time < nextDueAt) return;
    const due = [...pending.values()]
      .filter((job) => job.dueAt !== null && job.dueAt <= time)
      .sort((a, b) => (a.dueAt ?? 0) - (b.dueAt ?? 0));
    for (const job of due) complete(job, job.dueAt ?? time);
    updateNextDueAt();
  };

  const startJob = (
    chainId: string,
    address: string,
    contract: VerifiableContract,
    { method, scripted, verdict, stuck }: Pick<Job, 'method' | 'scripted' | 'verdict' | 'stuck'>,
  ): Job => {
    const startedAt = now();
    const job: Job = {
      verificationId: randomUUID(),
      key: storageKey(chainId, address),
      chainId,
      address,
      method,
      contract,
      scripted,
      verdict,
      stuck,
      startedAt,
      dueAt: jobDelayMs === null || stuck ? null : startedAt + jobDelayMs,
      finishedAt: null,
      match: null,
      compilationTime: null,
      error: null,
    };
    if (jobs.size >= capacity) {
      const oldest = jobs.values().next().value;
      if (oldest) {
        jobs.delete(oldest.verificationId);
        if (pending.get(oldest.key) === oldest) pending.delete(oldest.key);
      }
    }
    jobs.set(job.verificationId, job);
    pending.set(job.key, job);
    if (job.dueAt !== null && job.dueAt < nextDueAt) nextDueAt = job.dueAt;
    return job;
  };

  const jobJson = (job: Job): SourcifyV2Job => {
    const { match } = job;
    const contract: SourcifyV2Contract = match
      ? {
          match: levelOf(match.status),
          creationMatch: levelOf(match.status),
          runtimeMatch: levelOf(match.status),
          chainId: job.chainId,
          address: job.address,
          verifiedAt: wholeSeconds(match.storageTimestamp),
          matchId: match.matchId,
        }
      : unverified(job.chainId, job.address);
    return {
      isJobCompleted: job.finishedAt !== null,
      verificationId: job.verificationId,
      jobStartTime: wholeSeconds(job.startedAt),
      ...(job.finishedAt === null ? {} : { jobFinishTime: wholeSeconds(job.finishedAt) }),
      ...(job.compilationTime === null ? {} : { compilationTime: job.compilationTime }),
      ...(match && job.method !== 'etherscan'
        ? {
            externalVerifications: externalVerificationsOf(
              job.chainId,
              job.address,
              job.verificationId,
            ),
          }
        : {}),
      contract,
      ...(job.error === null ? {} : { error: job.error }),
    };
  };

  /**
   * The checks every verification route makes after the request validator, in Sourcify's order:
   * validateChainId, validateAddress, the failure on a deprecated chain, a scripted rejection,
   * checkIfAlreadyVerified, checkIfJobIsAlreadyRunning. The refusal (passed through `answer`), or
   * the contract's chain and checksummed address.
   */
  const admit = (
    rawChainId: string,
    rawAddress: string,
    answer: (response: SimulatorResponse) => SimulatorResponse,
  ):
    | SimulatorResponse
    | { chain: SourcifyChain; chainId: string; address: string; key: string } => {
    const reject = (code: V2RejectCode, message: string) =>
      answer(v2Error(rejectionStatus(code), code, message));
    const chain = context.chain(rawChainId);
    if (!chain) return reject('unsupported_chain', SOURCIFY_V2_MESSAGES.chainNotFound(rawChainId));
    const address = parseAddress(rawAddress);
    if (address === null) {
      return answer(
        v2Error(400, 'invalid_parameter', SOURCIFY_V2_MESSAGES.invalidAddress(rawAddress)),
      );
    }
    const chainId = rawChainId;
    // checkIfAlreadyVerified fails on a deprecated chain.
    if (!chain.supported) {
      return answer(v2Error(500, 'internal_error', SOURCIFY_V2_MESSAGES.internalError));
    }
    const scripted = outcomes.take(chainId, address, 'reject');
    if (scripted) {
      return reject(
        scripted.reject,
        scripted.message ?? defaultRejectionMessage(scripted.reject, chainId, address),
      );
    }
    const key = storageKey(chainId, address);
    if (context.storage().get(key)?.status === 'perfect') {
      return reject('already_verified', SOURCIFY_V2_MESSAGES.alreadyVerified(address, chainId));
    }
    if (pending.has(key)) {
      return reject(
        'duplicate_verification_request',
        SOURCIFY_V2_MESSAGES.beingVerified(address, chainId),
      );
    }
    return { chain, chainId, address, key };
  };

  /**
   * What a verify route answers, recorded as the received log keeps it: `answer` records each
   * response with what the route has `learnt` by then (the API key it was sent, the job it made).
   */
  const recorded = (
    request: UpstreamRequest,
    explorer: ReceivedVerification['explorer'],
    rawChainId: string,
    rawAddress: string,
    bytes?: number,
  ) => {
    const learnt: { apiKey?: string | undefined; verificationId: string | null } = {
      verificationId: null,
    };
    const answer = (response: SimulatorResponse): SimulatorResponse => {
      context.record({
        api: 'v2',
        explorer,
        address: rawAddress,
        chainId: rawChainId,
        apiKey: learnt.apiKey,
        sessionId: null,
        cookie: request.headers.cookie,
        verificationId: learnt.verificationId,
        status: response.status,
        ...(bytes === undefined ? {} : { bytes }),
      });
      return response;
    };
    return { learnt, answer };
  };

  /** `POST /v2/verify/etherscan/{chainId}/{address}`. */
  const verifyFromEtherscan = async (
    request: UpstreamRequest,
    rawChainId: string,
    rawAddress: string,
  ): Promise<SimulatorResponse> => {
    const { learnt, answer } = recorded(request, 'etherscan', rawChainId, rawAddress);
    const reject = (code: V2RejectCode, message: string) =>
      answer(v2Error(rejectionStatus(code), code, message));

    // body-parser, then the OpenAPI validator. Without a Content-Type it finds no schema for the
    // body ("unsupported media type undefined").
    const body = await readJsonRequestBody(request);
    if (!body.ok) return answer(v2Error(400, 'invalid_json', body.message));
    if (isRecord(body.value)) learnt.apiKey = sent(body.value.apiKey);
    const type = mediaType(request);
    if (type !== 'application/json') {
      return answer(
        v2Error(400, 'invalid_parameter', SOURCIFY_V2_MESSAGES.unsupportedMediaType(type)),
      );
    }
    const issues = [
      ...paramIssues('chainId', rawChainId, CHAIN_ID_SCHEMA),
      ...paramIssues('address', rawAddress, ADDRESS_SCHEMA),
    ];
    if (!isRecord(body.value)) issues.push('request/body must be object');
    else if (body.value.apiKey !== undefined && typeof body.value.apiKey !== 'string') {
      issues.push('request/body/apiKey must be string');
    }
    const [issue] = issues;
    if (issue !== undefined) return answer(v2Error(400, 'invalid_parameter', issue));

    const admitted = admit(rawChainId, rawAddress, answer);
    if ('status' in admitted) return admitted;
    const { chain, chainId, address, key } = admitted;
    // The Etherscan fetch, before answering.
    if (!chain.etherscanAPI) {
      return reject('unsupported_chain', SOURCIFY_V2_MESSAGES.chainWithoutEtherscan(chainId));
    }
    const fetchFailure = context.fetchFromEtherscan();
    if (fetchFailure) {
      const { status, message, v2Code } = etherscanFailureAnswer(fetchFailure);
      return answer(v2Error(status, v2Code, message));
    }
    const contract = context.contract(key);
    if (!contract) {
      return reject('not_etherscan_verified', SOURCIFY_V2_MESSAGES.notVerifiedOnEtherscan);
    }

    const job = startJob(chainId, address, contract, {
      method: 'etherscan',
      ...scriptedJob(chainId, address),
      verdict: undefined,
    });
    learnt.verificationId = job.verificationId;
    return answer(jsonResponse(202, { verificationId: learnt.verificationId }));
  };

  /** A scripted job failure, or a stuck job, for the next job of this contract. */
  const scriptedJob = (chainId: string, address: string): Pick<Job, 'scripted' | 'stuck'> => {
    const failure = outcomes.take(chainId, address, 'jobError');
    if (failure) {
      return {
        scripted: {
          code: failure.jobError,
          ...(failure.message === undefined ? {} : { message: failure.message }),
        },
        stuck: false,
      };
    }
    return { scripted: undefined, stuck: outcomes.take(chainId, address, 'stuck') !== null };
  };

  /**
   * `POST /v2/verify/{chainId}/{address}` (standard JSON) and `POST /v2/verify/metadata/…`: the
   * same checks as the Etherscan import, in the same order, then a job whose outcome is what
   * compiling the sent sources gives (`judgeSources`).
   */
  const verifyFromSources = async (
    request: UpstreamRequest,
    rawChainId: string,
    rawAddress: string,
    method: SourceMethod,
  ): Promise<SimulatorResponse> => {
    const bytes = (await request.readBody()).length;
    const { learnt, answer } = recorded(request, method, rawChainId, rawAddress, bytes);

    const body = await readJsonRequestBody(request);
    if (!body.ok) return answer(v2Error(400, 'invalid_json', body.message));
    const type = mediaType(request);
    if (type !== 'application/json') {
      return answer(
        v2Error(400, 'invalid_parameter', SOURCIFY_V2_MESSAGES.unsupportedMediaType(type)),
      );
    }
    const issue =
      paramIssues('chainId', rawChainId, CHAIN_ID_SCHEMA)[0] ??
      paramIssues('address', rawAddress, ADDRESS_SCHEMA)[0] ??
      sourceBodyIssue(body.value, method);
    if (issue) return answer(v2Error(400, 'invalid_parameter', issue));
    const admitted = admit(rawChainId, rawAddress, answer);
    if ('status' in admitted) return admitted;
    const { chainId, address, key } = admitted;
    const deployed = context.contract(key);
    const verdict = judgeSources(
      method,
      body.value as Record<string, unknown>,
      deployed,
      chainId,
      address,
    );
    const job = startJob(chainId, address, deployed ?? placeholderContract(chainId, address), {
      method,
      ...scriptedJob(chainId, address),
      verdict,
    });
    learnt.verificationId = job.verificationId;
    return answer(jsonResponse(202, { verificationId: learnt.verificationId }));
  };

  /**
   * `POST /v2/verify/similarity/{chainId}/{address}`: the checks of the other routes, then the
   * bytecode read before answering (v2-similarity.ts), then a job that finds a similar verified
   * contract or fails with `no_similar_match_found`.
   */
  const verifyBySimilarity = async (
    request: UpstreamRequest,
    rawChainId: string,
    rawAddress: string,
  ): Promise<SimulatorResponse> => {
    const bytes = (await request.readBody()).length;
    const { learnt, answer } = recorded(request, 'similarity', rawChainId, rawAddress, bytes);
    const body = await readJsonRequestBody(request);
    if (!body.ok) return answer(v2Error(400, 'invalid_json', body.message));
    const type = mediaType(request);
    if (bytes > 0 && type !== 'application/json') {
      return answer(
        v2Error(400, 'invalid_parameter', SOURCIFY_V2_MESSAGES.unsupportedMediaType(type)),
      );
    }
    const issue =
      paramIssues('chainId', rawChainId, CHAIN_ID_SCHEMA)[0] ??
      paramIssues('address', rawAddress, ADDRESS_SCHEMA)[0] ??
      similarityBodyIssue(body.value);
    if (issue) return answer(v2Error(400, 'invalid_parameter', issue));
    const admitted = admit(rawChainId, rawAddress, answer);
    if ('status' in admitted) return admitted;
    const { chainId, address, key } = admitted;
    const deployed = context.contract(key);
    if (!deployed) {
      const code = 'cannot_fetch_bytecode';
      return answer(
        v2Error(rejectionStatus(code), code, SOURCIFY_V2_MESSAGES.noBytecode(chainId, address)),
      );
    }
    const job = startJob(chainId, address, deployed, {
      method: 'similarity',
      ...scriptedJob(chainId, address),
      verdict: judgeSimilarity(key, deployed, context.storage(), context.contract),
    });
    learnt.verificationId = job.verificationId;
    return answer(jsonResponse(202, { verificationId: learnt.verificationId }));
  };

  /** `GET /v2/verify/{verificationId}`. */
  const getJob = (rawId: string): SimulatorResponse => {
    const [issue] = paramIssues('verificationId', rawId, VERIFICATION_ID_SCHEMA);
    if (issue !== undefined) return v2Error(400, 'invalid_parameter', issue);
    const job = jobs.get(rawId);
    if (!job) return v2Error(404, 'job_not_found', SOURCIFY_V2_MESSAGES.jobNotFound(rawId));
    return jsonResponse(200, jobJson(job));
  };

  /**
   * `GET /v2/contract/{chainId}/{address}`: the minimal fields, and `compilation` when asked for
   * (`fields=compilation`, `compilation.<sub-field>`, `all`, or an `omit` that leaves it); other
   * fields are not modelled.
   */
  const getContract = (
    request: UpstreamRequest,
    rawChainId: string,
    rawAddress: string,
  ): SimulatorResponse => {
    const issues: string[] = [];
    for (const name of new Set(request.query.keys())) {
      if (name !== 'fields' && name !== 'omit') {
        issues.push(`Unknown query parameter '${name}'`);
      } else if (request.query.getAll(name).length > 1) {
        issues.push(`request/query/${name} must be string`);
      }
    }
    issues.push(
      ...paramIssues('chainId', rawChainId, CHAIN_ID_SCHEMA),
      ...paramIssues('address', rawAddress, ADDRESS_SCHEMA),
    );
    const [issue] = issues;
    if (issue !== undefined) return v2Error(400, 'invalid_parameter', issue);
    const chain = context.chain(rawChainId);
    if (!chain) {
      return v2Error(
        context.unsupportedChainStatus(),
        'unsupported_chain',
        SOURCIFY_V2_MESSAGES.chainNotFound(rawChainId),
      );
    }
    const address = parseAddress(rawAddress);
    if (address === null) {
      return v2Error(400, 'invalid_parameter', SOURCIFY_V2_MESSAGES.invalidAddress(rawAddress));
    }
    const fields = request.query.get('fields');
    const omit = request.query.get('omit');
    const fieldsIssue = checkFieldsAndOmit(fields, omit);
    if (fieldsIssue !== null) return v2Error(400, 'invalid_parameter', fieldsIssue);
    // The lookup fails on a deprecated chain.
    if (!chain.supported) {
      return v2Error(500, 'internal_error', SOURCIFY_V2_MESSAGES.internalError);
    }

    const key = storageKey(rawChainId, address);
    const stored = context.storage().get(key);
    const level = stored ? levelOf(stored.status) : null;
    if (!stored || level === null) return jsonResponse(404, unverified(rawChainId, address));
    // In the order Sourcify's getContract builds it.
    const contract: SourcifyV2Contract & { matchId: string; verifiedAt: string } = {
      matchId: stored.matchId,
      creationMatch: level,
      runtimeMatch: level,
      verifiedAt: wholeSeconds(stored.storageTimestamp),
      match: level,
      chainId: rawChainId,
      address,
    };
    const verified = context.contract(key);
    const wanted = compilationFieldsAsked(fields, omit);
    if (!verified || wanted.length === 0) return jsonResponse(200, contract);
    const all = compilationOf(verified);
    const compilation = Object.fromEntries(
      Object.entries(all).filter(([field]) => wanted.includes(field)),
    );
    return jsonResponse(200, { ...contract, compilation });
  };

  const post = (
    request: UpstreamRequest,
    serve: () => Promise<SimulatorResponse>,
  ): Promise<SimulatorResponse> =>
    // Another method is undocumented for the validator (ignoreUndocumented): no route.
    request.method === 'POST' ? serve() : Promise.resolve(context.notFound(request));

  return {
    handle(request, path) {
      const isGet = request.method === 'GET' || request.method === 'HEAD';
      const get = (serve: () => SimulatorResponse) =>
        Promise.resolve(isGet ? serve() : context.notFound(request));
      const param = (match: RegExpExecArray, index: number) => decodeParam(match[index] ?? '');
      const etherscan = VERIFY_ETHERSCAN.exec(path);
      if (etherscan) {
        return post(request, () =>
          verifyFromEtherscan(request, param(etherscan, 1), param(etherscan, 2)),
        );
      }
      const metadata = VERIFY_METADATA.exec(path);
      if (metadata) {
        return post(request, () =>
          verifyFromSources(request, param(metadata, 1), param(metadata, 2), 'metadata'),
        );
      }
      const similarity = VERIFY_SIMILARITY.exec(path);
      if (similarity) {
        return post(request, () =>
          verifyBySimilarity(request, param(similarity, 1), param(similarity, 2)),
        );
      }
      const stdJson = VERIFY_STD_JSON.exec(path);
      if (stdJson) {
        return post(request, () =>
          verifyFromSources(request, param(stdJson, 1), param(stdJson, 2), 'std-json'),
        );
      }
      const job = JOB.exec(path);
      if (job) return get(() => getJob(param(job, 1)));
      const allChains = CONTRACT_ALL_CHAINS.exec(path);
      if (allChains) return get(() => lookups.allChains(request, param(allChains, 1)));
      const contract = CONTRACT.exec(path);
      if (contract) {
        return get(() => getContract(request, param(contract, 1), param(contract, 2)));
      }
      const list = CONTRACTS.exec(path);
      if (list) return get(() => lookups.contracts(request, param(list, 1)));
      return null;
    },
    abandonStuckJobs() {
      settle();
      for (const job of [...pending.values()]) {
        if (job.dueAt !== null) continue;
        pending.delete(job.key);
        job.finishedAt = now();
        job.error = jobError('job_abandoned', SOURCIFY_V2_MESSAGES.jobAbandoned);
      }
      updateNextDueAt();
    },
    settle,
    jobs() {
      settle();
      return [...jobs.values()].map((job) => ({
        verificationId: job.verificationId,
        chainId: job.chainId,
        address: job.address,
        state: job.finishedAt === null ? 'pending' : job.error === null ? 'succeeded' : 'failed',
        match: job.match ? levelOf(job.match.status) : null,
        errorCode: job.error?.customCode ?? null,
        startedAt: new Date(job.startedAt).toISOString(),
        finishedAt: job.finishedAt === null ? null : new Date(job.finishedAt).toISOString(),
      }));
    },
    get jobDelayMs() {
      return jobDelayMs;
    },
    setJobDelay(ms) {
      settle();
      jobDelayMs = ms;
      const time = now();
      for (const job of pending.values()) {
        job.dueAt = ms === null ? null : Math.max(time, job.startedAt + ms);
      }
      updateNextDueAt();
    },
    setOutcome: (target, outcome, times) => outcomes.set(target, outcome, times),
    outcomes: () => outcomes.list(),
    reset() {
      jobs.clear();
      pending.clear();
      nextDueAt = Number.POSITIVE_INFINITY;
      outcomes.clear();
      jobDelayMs = DEFAULT_JOB_DELAY_MS;
    },
  };
}

function defaultJobMessage(code: V2JobErrorCode, chainId: string, address: string): string {
  switch (code) {
    case 'compiler_error':
      return SOURCIFY_V2_MESSAGES.compilerError([]);
    case 'no_match':
      return SOURCIFY_V2_MESSAGES.noMatch;
    case 'extra_file_input_bug':
      return SOURCIFY_V2_MESSAGES.extraFileInputBug;
    case 'already_verified':
      return SOURCIFY_V2_MESSAGES.jobAlreadyVerified;
    case 'cannot_fetch_bytecode':
      return SOURCIFY_V2_MESSAGES.cannotFetchBytecode(chainId, address);
    case 'contract_not_deployed':
      return SOURCIFY_V2_MESSAGES.contractNotDeployed(chainId, address);
    case 'internal_error':
      return SOURCIFY_V2_MESSAGES.internalError;
    case 'missing_source':
      return SOURCIFY_V2_MESSAGES.missingSource([]);
    case 'invalid_compilation_target':
      return SOURCIFY_V2_MESSAGES.invalidCompilationTarget([]);
    case 'contract_not_found_in_compiler_output':
      return SOURCIFY_V2_MESSAGES.contractNotFoundInCompilerOutput;
    case 'compiler_timeout':
      return SOURCIFY_V2_MESSAGES.compilerTimeout;
    case 'compiler_out_of_memory':
      return SOURCIFY_V2_MESSAGES.compilerOutOfMemory;
    case 'job_abandoned':
      return SOURCIFY_V2_MESSAGES.jobAbandoned;
    case 'no_similar_match_found':
      return SOURCIFY_V2_MESSAGES.noSimilarMatchFound;
  }
}

/** A contract nobody deployed, for the job of an address without one (it fails). */
function placeholderContract(chainId: string, address: string): VerifiableContract {
  return { chainId, address, name: '', compiledPath: '', sources: [], status: 'error' };
}

/**
 * Where a verification from source was also submitted (argotorg/sourcify#2417, PR #2504), as the
 * job reports it: Etherscan and Blockscout took it; Routescan's limit refused it.
 */
function externalVerificationsOf(
  chainId: string,
  address: string,
  verificationId: string,
): SourcifyV2ExternalVerifications {
  const guid = verificationId.replaceAll('-', '').slice(0, 24);
  return {
    etherscan: {
      verificationId: guid,
      statusUrl: `https://api.etherscan.io/v2/api?chainid=${chainId}&module=contract&action=checkverifystatus&guid=${guid}`,
      explorerUrl: `https://etherscan.io/address/${address}#code`,
    },
    blockscout: {
      verificationId: guid,
      explorerUrl: `https://eth.blockscout.com/address/${address}?tab=contract`,
    },
    routescan: { error: 'NOTOK: Max rate limit reached' },
  };
}

/** A verified contract's `compilation`, as the lookup reports it; unknown values left out. */
function compilationOf(contract: VerifiableContract): SourcifyV2Compilation {
  return {
    language: 'Solidity',
    compiler: 'solc',
    ...(contract.compilerVersion === undefined
      ? {}
      : { compilerVersion: contract.compilerVersion }),
    compilerSettings: {},
    name: contract.name,
    fullyQualifiedName: `${contract.compiledPath}:${contract.name}`,
  };
}

/** The `compilation` sub-fields a (checked) `fields` or `omit` selects. */
function compilationFieldsAsked(fields: string | null, omit: string | null): readonly string[] {
  const all = CONTRACT_FIELDS.compilation ?? [];
  if (fields !== null) {
    const list = fields.split(',');
    if (list.includes('all') || list.includes('compilation')) return all;
    return all.filter((sub) => list.includes(`compilation.${sub}`));
  }
  if (omit !== null) {
    const list = omit.split(',');
    return list.includes('compilation')
      ? []
      : all.filter((sub) => !list.includes(`compilation.${sub}`));
  }
  return [];
}

/** validateFieldsAndOmit: the first problem with `fields`/`omit`, or null. */
function checkFieldsAndOmit(fields: string | null, omit: string | null): string | null {
  if (fields && omit) return SOURCIFY_V2_MESSAGES.fieldsAndOmit;
  const check = (field: string): string | null => {
    const parts = field.split('.');
    if (parts.length > 2) return SOURCIFY_V2_MESSAGES.tooDeepField(field);
    const [top = '', sub] = parts;
    const subFields = Object.hasOwn(CONTRACT_FIELDS, top) ? CONTRACT_FIELDS[top] : undefined;
    const known =
      subFields !== undefined && (sub === undefined || (subFields?.includes(sub) ?? false));
    return known ? null : SOURCIFY_V2_MESSAGES.unknownField(field);
  };
  const fieldList = fields === null ? [] : fields.split(',');
  if (fieldList.includes('all')) {
    return fieldList.length > 1 ? SOURCIFY_V2_MESSAGES.allWithOtherFields : null;
  }
  for (const field of [...fieldList, ...(omit === null ? [] : omit.split(','))]) {
    const issue = check(field);
    if (issue !== null) return issue;
  }
  return null;
}
