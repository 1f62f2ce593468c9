import { parseTimes } from '../fault.js';
import { JSON_CONTENT_TYPE, jsonResponse } from '../json-response.js';
import type { SimulatorResponse, Upstream, UpstreamRequest } from '../upstream.js';
import { type ApiV2, createSimulatedApiV2, type VerificationJobInfo } from './apiv2.js';
import { expressNotFound, SOURCIFY_MESSAGES, sourcifyError, validatorError } from './errors.js';
import { withEtag } from './etag.js';
import {
  type ActiveEtherscanFailure,
  type EtherscanFailure,
  etherscanFailureAnswer,
  FakeEtherscan,
  parseEtherscanFailure,
} from './etherscan.js';
import { SOURCIFY_CHAINS, VERIFIABLE_CONTRACTS, type VerifiableContract } from './fixture.js';
import { MatchStorage, storageKey } from './match-storage.js';
import { parseServerVersion, parseSourcifyChains, parseVerifiableContract } from './parse.js';
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
import type { SourcifyChain, SourcifyServerVersion } from './types.js';
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
/** Where Sourcify's session routes live; its v1 router marks every answer there deprecated. */
const SESSION_PATH = /^\/session(\/|$)/i;

export interface VerificationUpstreamOptions {
  /** Received requests kept (older ones are dropped but still counted). Default 10,000. */
  receivedCapacity?: number;
  /** Sessions kept (least recently used dropped first). Default 10,000. */
  sessionCapacity?: number;
  /** APIv2 jobs kept (oldest dropped first). Default 10,000. */
  jobCapacity?: number;
  /**
   * The server to model (see `SourcifyServerVersion`), what `reset()` comes back to. Default
   * `latest`: today's Sourcify, APIv2 only. `3.9.1` for a server with the session API too,
   * `session-only` for one from before APIv2, null for both APIs (3.9.1's session API, today's
   * APIv2).
   */
  serverVersion?: SourcifyServerVersion | null;
}

/**
 * Sourcify's session verification API and its APIv2 over one fake Etherscan, one chain list and
 * one match storage:
 *
 * - `POST /session/verify/etherscan` `{ address, chainId, apiKey? }` → the caller's session
 *   (sourcify-server 3.9.1 and before; `Deprecation: true` on every answer under `/session`)
 * - `GET /chains` → the chain list (404 after `setChains(null)`)
 * - `POST /v2/verify/etherscan/:chainId/:address` `{ apiKey? }` → 202 `{ verificationId }`
 * - `GET /v2/verify/:verificationId` → the job; `GET /v2/contract/:chainId/:address` → the match
 * - anything else → Express's 404 HTML page, `Cannot GET /x`
 *
 * Only the session route sets the `sourcify_vid` cookie.
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
   * Which real server to behave as where they differ (see `SourcifyServerVersion`): `latest` (the
   * default) and `3.12.1` have APIv2 only (`/session/...` answers Express's 404 page) and answer
   * `unsupported_chain` with 400; `3.9.1` serves the session API too and answers APIv2's
   * `unsupported_chain` with 404; `session-only` has no `/v2` route; null serves the session API
   * as 3.9.1 does and APIv2 as `latest` does, so one simulator serves every `VERIFY_API` mode.
   */
  readonly serverVersion: SourcifyServerVersion | null;
  /** Throws a TypeError unless null or one of `SourcifyServerVersion`. */
  setServerVersion(version: SourcifyServerVersion | null): void;
  /** The fake Etherscan's failure in force, or null when it answers. */
  readonly etherscanFailure: ActiveEtherscanFailure | null;
  /**
   * Make the fake Etherscan fail Sourcify's next fetches (`times`, default: until cleared), in
   * both APIs: `unreachable`, `http-error` (it answers 503) and `invalid-api-key` come back as
   * 502 (session API `{ error, message }`, APIv2 `etherscan_request_failed`), `rate-limit` as 429
   * (`etherscan_limit` with APIv2), without `Retry-After`. null clears. Throws a TypeError on bad
   * input.
   */
  setEtherscanFailure(failure: EtherscanFailure | null, options?: { times?: number }): void;
  /**
   * APIv2 verification jobs, oldest first, with their state (jobs due by now are completed
   * first). At most `jobCapacity` are kept: the oldest are dropped (and then answer 404).
   */
  jobs(): VerificationJobInfo[];
  /** Fails every stuck job (one that never completes) with `job_abandoned`, as Sourcify's reaper. */
  abandonStuckJobs(): void;
  /** `304 Not Modified` answers given to conditional lookups since the last reset. */
  readonly notModified: number;
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
   * outcomes, the job delay, the server version and Etherscan's failure back to the fixture and
   * defaults.
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

/** Express answers 404 with an HTML page for a path without a route, with no session. */
function notFound(request: UpstreamRequest): SimulatorResponse {
  return expressNotFound(request.method, request.path);
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
  const defaultVersion =
    options.serverVersion === undefined ? 'latest' : parseServerVersion(options.serverVersion);
  let serverVersion: SourcifyServerVersion | null = defaultVersion;
  let notModified = 0;
  let etherscan = new FakeEtherscan();
  const hasSessionApi = (): boolean =>
    serverVersion === null || serverVersion === '3.9.1' || serverVersion === 'session-only';
  const hasApiV2 = (): boolean => serverVersion !== 'session-only';

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
    serverVersion = defaultVersion;
    etherscan = new FakeEtherscan();
  };
  useFixture();

  const apiV2: ApiV2 = createSimulatedApiV2(
    {
      chain: (chainId) => chainsById.get(chainId),
      contract: (key) => contracts.get(key),
      storage: () => storage,
      record: (entry) => received.record(entry),
      notFound,
      unsupportedChainStatus: () => (serverVersion === '3.9.1' ? 404 : 400),
      fetchFromEtherscan: () => etherscan.fetch(),
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
    // fetchFromEtherscan: Etherscan's failures come before anything it would have said.
    const failure = etherscan.fetch();
    if (failure) {
      const { status, message } = etherscanFailureAnswer(failure);
      return sourcifyError(status, message);
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
    // No route for another method, another explorer, or on a server without the session API;
    // body-parser still reads a POST's JSON body first.
    const routed = hasSessionApi() && explorer.toLowerCase() === ETHERSCAN;
    if (request.method !== 'POST') return notFound(request);
    if (!routed) {
      const body = await readJsonBody(request);
      if (!body.ok) return record(request, explorer, sentFields({}), { ...body, sessionId: null });
      return record(request, explorer, sentFields(body.value), {
        response: notFound(request),
        sessionId: null,
      });
    }

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
    return chainsBody === null
      ? notFound(request)
      : { status: 200, headers: { 'content-type': JSON_CONTENT_TYPE }, body: chainsBody };
  };

  /** Routes a request; null for a path without a route. */
  const route = (
    request: UpstreamRequest,
    path: string,
  ): SimulatorResponse | Promise<SimulatorResponse> | null => {
    const v2 = hasApiV2() ? apiV2.handle(request, path) : null;
    if (v2 !== null) return v2;
    if (path.toLowerCase() === '/chains') return handleChains(request);
    const explorer = VERIFY_PATH.exec(path)?.[1];
    if (explorer !== undefined) return handleVerify(request, explorer);
    return null;
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
    get serverVersion() {
      return serverVersion;
    },
    setServerVersion(version) {
      serverVersion = parseServerVersion(version);
    },
    get etherscanFailure() {
      return etherscan.active;
    },
    setEtherscanFailure(failure, failureOptions = {}) {
      etherscan.set(
        failure === null ? null : parseEtherscanFailure(failure),
        parseTimes(failureOptions.times),
      );
    },
    jobs: () => apiV2.jobs(),
    abandonStuckJobs: () => apiV2.abandonStuckJobs(),
    get notModified() {
      return notModified;
    },
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
      notModified = 0;
      apiV2.reset();
      useFixture();
    },
    async handle(request) {
      // Jobs due by now complete first: both APIs see their matches.
      apiV2.settle();
      // Express routing: case-insensitive, a trailing slash allowed.
      const path =
        request.path.length > 1 && request.path.endsWith('/')
          ? request.path.slice(0, -1)
          : request.path;
      const response = (await route(request, path)) ?? notFound(request);
      if (hasSessionApi() && SESSION_PATH.test(request.path)) {
        response.headers.deprecation = 'true';
      }
      const revalidated = withEtag(request, response);
      if (revalidated.status === 304) notModified += 1;
      return revalidated;
    },
  };
}
