import { parseTimes } from '../fault.js';
import { JSON_CONTENT_TYPE, jsonResponse } from '../json-response.js';
import type { SimulatorResponse, Upstream, UpstreamRequest } from '../upstream.js';
import { type ApiV2, createSimulatedApiV2, type VerificationJobInfo } from './apiv2.js';
import { SOURCIFY_MESSAGES, sourcifyError, validatorError } from './errors.js';
import { SOURCIFY_CHAINS, VERIFIABLE_CONTRACTS, type VerifiableContract } from './fixture.js';
import { MatchStorage, storageKey } from './match-storage.js';
import { parseSourcifyChains, parseVerifiableContract } from './parse.js';
import { ReceivedLog, type ReceivedVerification } from './received-log.js';
import {
  checkMediaType,
  checkVerifyBody,
  readJsonBody,
  type SentFields,
  sentFields,
  type VerifyRequest,
} from './request-body.js';
import { filesOf, verificationIdOf, verifySession } from './session-json.js';
import { SessionStore, type VerificationSession } from './sessions.js';
import type { SourcifyChain } from './types.js';
import {
  type ActiveV2Outcome,
  parseJobDelay,
  parseOutcome,
  parseOutcomeTarget,
  type V2Outcome,
  type V2OutcomeTarget,
} from './v2-outcomes.js';

/**
 * Where the verification upstream is mounted, standing for `https://sourcify.dev/server`: both
 * the session API and APIv2 (`/v2/...`) are served there.
 */
export const VERIFY_PREFIX = '/verify';

/** The one explorer Sourcify's session API imports from. */
const ETHERSCAN = 'etherscan';
const VERIFY_PATH = /^\/session\/verify\/([^/]+)$/i;

export interface VerificationUpstreamOptions {
  /** Received requests kept (older ones are dropped but still counted). Default 10,000. */
  receivedCapacity?: number;
  /** Sessions kept (least recently used dropped first). Default 10,000. */
  sessionCapacity?: number;
  /** APIv2 jobs kept (oldest dropped first). Default 10,000. */
  jobCapacity?: number;
}

/**
 * Sourcify's session verification API and its APIv2 over one fake Etherscan, one chain list and
 * one match storage:
 *
 * - `POST /session/verify/etherscan` `{ address, chainId, apiKey? }` → the caller's session
 * - `GET /chains` → the chain list (404 after `setChains(null)`)
 * - `POST /v2/verify/etherscan/:chainId/:address` `{ apiKey? }` → 202 `{ verificationId }`
 * - `GET /v2/verify/:verificationId` → the job; `GET /v2/contract/:chainId/:address` → the match
 */
export interface VerificationUpstream extends Upstream {
  readonly name: 'verify';
  /**
   * Every verification request received (`POST /verify/session/verify/:explorer`, and
   * `POST /verify/v2/verify/etherscan/:chainId/:address` with `api: 'v2'`; faulted ones that
   * never reached the upstream excepted), oldest first, with the apiKey as sent (tests check it
   * arrived). Bounded like the request log; a fresh copy on each read.
   */
  readonly received: ReceivedVerification[];
  /** Every verification request received since the last reset. */
  readonly receivedCount: number;
  /**
   * The chain list verification uses (a copy): what GET /chains serves, unless hidden by
   * `setChains(null)`.
   */
  readonly chains: readonly SourcifyChain[];
  /** False after `setChains(null)`: `GET /chains` answers 404. */
  readonly chainsListed: boolean;
  /** The contracts the fake explorer knows. */
  readonly contracts: readonly VerifiableContract[];
  /** Contract addresses (checksummed, in the order added) held by each live session id. */
  sessions(): Map<string, string[]>;
  /**
   * Replace the chain list (verification follows it); null makes GET /chains answer 404 (a
   * server without a chain list) while verification keeps the last list. Throws a TypeError on
   * a bad list.
   */
  setChains(chains: readonly SourcifyChain[] | null): void;
  /** Add or replace a contract the fake explorer knows. Throws a TypeError on a bad contract. */
  addContract(contract: VerifiableContract): void;
  /**
   * APIv2 verification jobs, oldest first, with their state (jobs due by now are completed
   * first). At most `jobCapacity` are kept: the oldest are dropped (and then answer 404).
   */
  jobs(): VerificationJobInfo[];
  /** How long an APIv2 job stays pending, in ms (default 150); null: forever. */
  readonly jobDelayMs: number | null;
  /**
   * Set how long APIv2 jobs stay pending: 0 completes them at the next request, null never.
   * Pending jobs follow the new delay, counted from their start (never completing in the past).
   * Throws a TypeError unless null or 0 to 600,000.
   */
  setJobDelay(ms: number | null): void;
  /**
   * Script APIv2 verifications of one contract (`{ chainId, address }`) or of all (`'*'`; an exact
   * contract wins): `{ reject: code }` answers `POST /v2/verify/etherscan/...` with that error at
   * once (`unsupported_chain` 400, `already_verified` 409, `duplicate_verification_request` 429,
   * `not_etherscan_verified` 404, `etherscan_limit` 429, `etherscan_request_failed` 502,
   * `internal_error` 500); `{ jobError: code }` accepts it and fails its job with that error.
   * `outcome: null` clears; `times` limits how many requests it decides (default: until cleared).
   * Throws a TypeError on bad input.
   */
  setOutcome(
    target: V2OutcomeTarget,
    outcome: V2Outcome | null,
    options?: { times?: number },
  ): void;
  /** The scripted outcomes in force. */
  outcomes(): ActiveV2Outcome[];
  /**
   * Sessions, received, chains, contracts (and matches Sourcify stored), APIv2 jobs, scripted
   * outcomes and the job delay back to the fixture and defaults.
   */
  reset(): void;
}

function seedStorage(contracts: Iterable<VerifiableContract>): MatchStorage {
  const storage = new MatchStorage();
  for (const contract of contracts) {
    if (contract.storageTimestamp !== undefined) {
      storage.store(
        storageKey(contract.chainId, contract.address),
        contract.status,
        contract.storageTimestamp,
      );
    }
  }
  return storage;
}

/** Express answers 404 for a path without a route; Sourcify's error handler words it as JSON. */
function notFound(request: UpstreamRequest): SimulatorResponse {
  return sourcifyError(404, `Cannot ${request.method} ${request.path}`);
}

/** The OpenAPI validator's answer for a documented path asked with another method. */
function methodNotAllowed(request: UpstreamRequest, path: string): SimulatorResponse {
  const message = `${request.method} method not allowed`;
  return validatorError(405, message, [{ path, message }]);
}

export function createVerificationUpstream(
  options: VerificationUpstreamOptions = {},
): VerificationUpstream {
  const received = new ReceivedLog(options.receivedCapacity);
  const sessionStore = new SessionStore(
    options.sessionCapacity === undefined ? {} : { capacity: options.sessionCapacity },
  );
  let chains: readonly SourcifyChain[] = [];
  let chainsById = new Map<string, SourcifyChain>();
  let chainsBody: Buffer | null = null;
  let contracts = new Map<string, VerifiableContract>();
  let storage = new MatchStorage();

  const useChains = (list: readonly SourcifyChain[]): void => {
    chains = list;
    chainsById = new Map(list.map((chain) => [String(chain.chainId), chain]));
    chainsBody = Buffer.from(JSON.stringify(list));
  };

  const useFixture = (): void => {
    useChains(parseSourcifyChains(SOURCIFY_CHAINS));
    const fixture = VERIFIABLE_CONTRACTS.map(parseVerifiableContract);
    contracts = new Map(fixture.map((c) => [storageKey(c.chainId, c.address), c]));
    storage = seedStorage(fixture);
  };
  useFixture();

  const apiV2: ApiV2 = createSimulatedApiV2(
    {
      chain: (chainId) => chainsById.get(chainId),
      contract: (key) => contracts.get(key),
      storage: () => storage,
      record: (entry) => received.record(entry),
      notFound,
    },
    options.jobCapacity === undefined ? {} : { jobCapacity: options.jobCapacity },
  );

  /** Serves a request within its session (opened as express-session does) and sets the cookie. */
  const inSession = (
    request: UpstreamRequest,
    serve: (session: VerificationSession) => SimulatorResponse,
  ): { response: SimulatorResponse; sessionId: string } => {
    const session = sessionStore.open(request.headers.cookie);
    const response = serve(session);
    response.headers['set-cookie'] = sessionStore.touch(session);
    return { response, sessionId: session.id };
  };

  const record = (
    request: UpstreamRequest,
    explorer: string,
    fields: SentFields,
    outcome: { response: SimulatorResponse; sessionId: string | null },
  ): SimulatorResponse => {
    received.record({
      explorer,
      ...fields,
      sessionId: outcome.sessionId,
      cookie: request.headers.cookie,
      status: outcome.response.status,
    });
    return outcome.response;
  };

  /** `sessionVerifyFromEtherscan`, for a request that passed the validator. */
  const verifyFromEtherscan = (
    session: VerificationSession,
    { address, chainId }: VerifyRequest,
  ): SimulatorResponse => {
    const chain = chainsById.get(chainId);
    if (!chain?.etherscanAPI) {
      return sourcifyError(400, SOURCIFY_MESSAGES.chainWithoutEtherscan(chain?.chainId ?? chainId));
    }
    const contract = contracts.get(storageKey(chainId, address));
    if (!contract) return sourcifyError(404, SOURCIFY_MESSAGES.notVerifiedOnEtherscan);

    const verificationId = verificationIdOf(contract);
    const files = [...filesOf(contract, verificationId)].filter(
      ([id]) => !session.inputFiles.has(id),
    );
    if (files.length === 0) return sourcifyError(400, SOURCIFY_MESSAGES.noNewFile);
    for (const [id, path] of files) session.inputFiles.set(id, path);
    if (!session.contracts.has(verificationId)) {
      session.contracts.set(verificationId, { verificationId, contract, address, chainId });
    }
    return jsonResponse(200, verifySession(session, storage, new Date()));
  };

  const handleVerify = async (
    request: UpstreamRequest,
    explorer: string,
  ): Promise<SimulatorResponse> => {
    const isPost = request.method === 'POST';
    if (explorer.toLowerCase() !== ETHERSCAN) {
      // No such route: body-parser still reads JSON bodies, then Express answers 404.
      if (!isPost) return inSession(request, () => notFound(request)).response;
      const body = await readJsonBody(request);
      if (!body.ok) return record(request, explorer, sentFields({}), { ...body, sessionId: null });
      return record(
        request,
        explorer,
        sentFields(body.value),
        inSession(request, () => notFound(request)),
      );
    }
    if (!isPost) return methodNotAllowed(request, `/session/verify/${ETHERSCAN}`);

    const unsupported = checkMediaType(request);
    if (unsupported) {
      return record(request, explorer, sentFields({}), { response: unsupported, sessionId: null });
    }
    const body = await readJsonBody(request);
    if (!body.ok) return record(request, explorer, sentFields({}), { ...body, sessionId: null });
    const fields = sentFields(body.value);
    const checked = checkVerifyBody(
      body.value,
      (chainId) => chainsById.get(chainId)?.supported === true,
    );
    if (!checked.ok) return record(request, explorer, fields, { ...checked, sessionId: null });
    return record(
      request,
      explorer,
      fields,
      inSession(request, (session) => verifyFromEtherscan(session, checked.value)),
    );
  };

  const handleChains = (request: UpstreamRequest): SimulatorResponse => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return methodNotAllowed(request, '/chains');
    }
    return inSession(request, () =>
      chainsBody === null
        ? notFound(request)
        : { status: 200, headers: { 'content-type': JSON_CONTENT_TYPE }, body: chainsBody },
    ).response;
  };

  return {
    name: 'verify',
    prefix: VERIFY_PREFIX,
    get received() {
      return received.entries();
    },
    get receivedCount() {
      return received.count;
    },
    get chains() {
      return structuredClone(chains);
    },
    get chainsListed() {
      return chainsBody !== null;
    },
    get contracts() {
      return [...contracts.values()];
    },
    sessions: () => sessionStore.snapshot(),
    setChains(list) {
      if (list === null) {
        chainsBody = null;
        return;
      }
      useChains(parseSourcifyChains(list));
    },
    addContract(contract) {
      const parsed = parseVerifiableContract(contract);
      const key = storageKey(parsed.chainId, parsed.address);
      contracts.set(key, parsed);
      if (parsed.storageTimestamp === undefined) storage.delete(key);
      else storage.store(key, parsed.status, parsed.storageTimestamp);
    },
    jobs: () => apiV2.jobs(),
    get jobDelayMs() {
      return apiV2.jobDelayMs;
    },
    setJobDelay: (ms) => apiV2.setJobDelay(parseJobDelay(ms)),
    setOutcome(target, outcome, outcomeOptions = {}) {
      apiV2.setOutcome(
        parseOutcomeTarget(target),
        outcome === null ? null : parseOutcome(outcome),
        parseTimes(outcomeOptions.times),
      );
    },
    outcomes: () => apiV2.outcomes(),
    reset() {
      sessionStore.clear();
      received.reset();
      apiV2.reset();
      useFixture();
    },
    handle(request) {
      // Jobs due by now complete first: both APIs see their matches.
      apiV2.settle();
      // Express routing: case-insensitive, a trailing slash allowed.
      const path =
        request.path.length > 1 && request.path.endsWith('/')
          ? request.path.slice(0, -1)
          : request.path;
      const v2 = apiV2.handle(request, path);
      if (v2 !== null) return v2;
      if (path.toLowerCase() === '/chains') return handleChains(request);
      const explorer = VERIFY_PATH.exec(path)?.[1];
      if (explorer !== undefined) return handleVerify(request, explorer);
      return inSession(request, () => notFound(request)).response;
    },
  };
}
