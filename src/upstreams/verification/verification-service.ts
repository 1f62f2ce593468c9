import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { InvalidInputError } from '../../errors/invalid-input-error.js';
import type { RedisConnection } from '../../redis/redis-connection.js';
import { SnapshotCache } from '../snapshot-cache.js';
import {
  createUpstreamClient,
  type UpstreamClientOptions,
  type UpstreamObserver,
} from '../upstream-client.js';
import { createApiDetection } from './api-detection.js';
import { createApiV2 } from './apiv2.js';
import { mapBounded } from './bounded-map.js';
import { type ConfiguredChain, createConfiguredChainsCheck } from './configured-chains.js';
import { createContractCache } from './contract-cache.js';
import {
  checkAddress,
  checkChain,
  checkChainId,
  checkContractLocation,
  checkInput,
} from './input.js';
import { createJobOutcomes } from './job-outcome.js';
import { JobWatcher, type JobWatchObserver } from './job-watcher.js';
import {
  type Chain,
  type Contract,
  EXPLORER_PATHS,
  type VerificationOutcome,
  type VerifyBySimilarityInput,
  type VerifyContractInput,
  type VerifyFromMetadataInput,
  type VerifyFromSourceInput,
} from './model.js';
import { RedisJobPolls } from './redis-job-polls.js';
import { createSessionApi } from './session-api.js';
import { checkMetadataInput, checkSimilarityInput, checkSourceInput } from './source-input.js';
import { reportingUnreachable } from './unreachable.js';
import { isVerificationServiceFailure } from './upstream-answer.js';
import type { UpstreamSession } from './upstream-session.js';
import { WireChain, WireChains } from './wire.js';

export interface VerificationServiceOptions
  extends Omit<Config['verification'], 'sessionCookieSecure' | 'maxConcurrentUploads'>,
    Pick<UpstreamClientOptions, 'logger' | 'tracing'> {
  /** Shares the polls of watched jobs with the other replicas; without it, each polls alone. */
  readonly redis?: RedisConnection | undefined;
  readonly observer?: (UpstreamObserver & JobWatchObserver) | undefined;
  /**
   * The chain ids the configuration maps to status pages, now: each the service's list lacks or
   * lists as unsupported is logged once, where it is configured, when the list is fetched.
   */
  readonly configuredChains?: (() => Iterable<ConfiguredChain>) | undefined;
}

/** Addresses `contracts` looks up at most in one call. */
export const MAX_LOOKUP_ADDRESSES = 100;

/** Contracts one page of `verifiedContracts` holds at most (Sourcify's own limit is 200). */
export const MAX_PAGE_SIZE = 100;

/** Sourcify's job ids are UUIDs: anything else is refused before it is sent or watched. */
const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A contract as a lookup key: where it is deployed. */
export type ContractLocation = Pick<Contract, 'chainId' | 'address'>;

/** The contract verification upstream, in either of its APIs. */
export type VerificationService = ReturnType<typeof createVerificationService>;

export function createVerificationService(options: VerificationServiceOptions) {
  const { baseUrl, chainsTtlMs, waitMs, pollIntervalMs, upstream, logger, observer, tracing } =
    options;
  const client = reportingUnreachable(
    createUpstreamClient({
      ...upstream,
      baseUrl,
      name: 'verification service',
      logger,
      // Sourcify's own error answers (Etherscan failing behind it, an internal error on one chain)
      // are not the service failing: they never open its circuit for everyone.
      isServiceFailure: isVerificationServiceFailure,
      observer,
      tracing,
    }),
  );
  const detection = createApiDetection({
    setting: options.api,
    client,
    logger,
    baseUrl,
    cooldownMs: upstream.circuitCooldownMs,
  });
  const sessionApi = createSessionApi(client, logger);
  const closing = new AbortController();
  const outcomes = createJobOutcomes({
    staleMs: options.jobStaleMs,
    lookUp: (chainId, address, requestId) => contracts.get(chainId, address, requestId),
  });
  const apiV2 = createApiV2(client, {
    waitMs,
    pollIntervalMs,
    outcomes,
    closing: closing.signal,
    chainOf: async (chainId, requestId) =>
      (await knownChains(requestId))?.find((chain) => chain.id === chainId),
  });
  const contracts = createContractCache({
    maxBytes: options.lookupCacheBytes,
    ttlMs: options.lookupTtlMs,
    load: apiV2.lookUp,
  });
  const { watch } = options;
  const watcher = new JobWatcher({
    ...watch,
    staleMs: options.jobStaleMs,
    // The session API has no jobs: every id is unknown there, as `verificationJob` answers.
    fetch: (id) =>
      detection.rechecking(async () =>
        (await detection.api()) === 'session' ? null : apiV2.job(id, undefined),
      ),
    outcomeOf: (job) => outcomes.outcomeOf(job, undefined, undefined),
    isStale: (job) => outcomes.pending(job.verificationId, job.jobStartTime, null).stale,
    sharing:
      options.redis &&
      new RedisJobPolls({
        redis: options.redis,
        intervalMs: watch.intervalMs,
        maxLeaseMs: watch.staleIntervalMs,
      }),
    observer,
    logger,
  });

  const checkConfigured = createConfiguredChainsCheck(
    options.configuredChains ?? (() => []),
    logger,
  );
  const chains = new SnapshotCache<readonly Chain[]>({
    ttlMs: chainsTtlMs,
    maxStaleMs: 24 * chainsTtlMs,
    // A server without a chain list should not cost a request on every verification; but a failure
    // is never trusted longer than a list would be (VERIFY_CHAINS_TTL_MS=0 asks every time).
    failureTtlMs: Math.min(60_000, chainsTtlMs),
    load: async (requestId) => {
      const list = toChains(await client.getJson('/chains', WireChains, { requestId }), logger);
      checkConfigured(list);
      return list;
    },
  });

  const knownChains = (requestId?: string): Promise<readonly Chain[] | undefined> =>
    chains.get(requestId).then(
      ({ value }) => value,
      () => undefined,
    );

  /** A verified contract (APIv2 lookup), null when not verified. Cached, revalidated by ETag. */
  async function contract(chainId: string, address: string, requestId?: string) {
    checkContractLocation(chainId, address);
    return contracts.get(chainId, address, requestId);
  }

  /**
   * Runs a verification unless the service's chain list refuses its chain (see `checkChain`); a
   * result makes the lookups of its contract ask again.
   */
  async function verified(
    location: ContractLocation,
    requestId: string | undefined,
    verify: () => Promise<VerificationOutcome>,
    explorer?: string,
  ): Promise<VerificationOutcome> {
    const list = await knownChains(requestId);
    if (list) checkChain(location.chainId, list, explorer);
    const outcome = await detection.rechecking(verify);
    // Lookups made before may say "not verified": the next one asks again.
    if (outcome.kind === 'result') {
      contracts.delete(location.chainId, location.address);
      for (const { chainId, address } of outcome.contracts) {
        if (chainId && address) contracts.delete(chainId, address);
      }
    }
    return outcome;
  }

  return {
    /** The API in use: as configured, or as found out (`auto`, undefined until then). */
    get api() {
      return detection.known;
    },
    /**
     * Shutting down: every verification that is polling its APIv2 job answers `VerificationPending`
     * with the job id at once instead of waiting out `VERIFY_WAIT_MS`; watched jobs end.
     */
    close(): void {
      closing.abort();
      watcher.close();
    },

    /** The chains the upstream verifies on; rejects with an upstream error when it has no list. */
    supportedChains: async (requestId?: string): Promise<readonly Chain[]> =>
      (await chains.get(requestId)).value.filter((chain) => chain.supported),

    /**
     * Verifies a contract from a block explorer. With the session API, within the caller's upstream
     * session, resolving to the session's contracts; with APIv2, waiting for the job up to the
     * configured time and resolving to its result or to "pending". Rejects with
     * `InvalidInputError`, `VerificationRejectedError`, `RateLimitedError` or an upstream error.
     */
    async verifyContract(
      input: VerifyContractInput,
      session: UpstreamSession,
      requestId?: string,
    ): Promise<VerificationOutcome> {
      checkInput(input);
      return verified(
        input,
        requestId,
        async () =>
          (await detection.api(requestId)) === 'session'
            ? sessionApi.verify(input, session, requestId)
            : apiV2.verify(input, requestId),
        EXPLORER_PATHS[input.explorer],
      );
    },

    /** Verifies from a standard JSON input (APIv2), as `verifyContract` waits for its job. */
    async verifyFromSource(input: VerifyFromSourceInput, requestId?: string) {
      const checked = checkSourceInput(input, options.maxSourceBytes);
      return verified(checked, requestId, () => apiV2.verifyFromSource(checked, requestId));
    },

    /** Verifies from metadata.json and its sources (APIv2), as `verifyContract` waits. */
    async verifyFromMetadata(input: VerifyFromMetadataInput, requestId?: string) {
      const checked = checkMetadataInput(input, options.maxSourceBytes);
      return verified(checked, requestId, () => apiV2.verifyFromMetadata(checked, requestId));
    },

    /** Verifies by similarity to contracts the service has verified (APIv2), as `verifyContract` waits. */
    async verifyBySimilarity(input: VerifyBySimilarityInput, requestId?: string) {
      const checked = checkSimilarityInput(input);
      return verified(checked, requestId, () => apiV2.verifyBySimilarity(checked, requestId));
    },

    /** An APIv2 job's current state; null for an unknown id, and always with the session API. */
    async verificationJob(id: string, requestId?: string): Promise<VerificationOutcome | null> {
      checkJobId(id);
      if ((await detection.api(requestId)) === 'session') return null;
      const job = await apiV2.job(id.toLowerCase(), requestId);
      return job ? outcomes.outcomeOf(job, undefined, requestId) : null;
    },

    /**
     * An APIv2 job's state now, then each change, until it completes (`verificationJobChanged`),
     * for `client` (its address: the polls' share of the budget is per client). Throws
     * `InvalidInputError` for an id that cannot be a job's.
     */
    watchJob(id: string, client?: string) {
      checkJobId(id);
      return watcher.watch(id.toLowerCase(), client);
    },

    contract,

    /**
     * Many lookups, at most `VERIFY_LOOKUP_CONCURRENCY` in flight: one answer per location, in
     * order, the `Error` it failed with where it failed (DataLoader's contract).
     */
    contracts: (locations: readonly ContractLocation[], requestId?: string) =>
      mapBounded(locations, options.lookupConcurrency, ({ chainId, address }) =>
        contract(chainId, address, requestId),
      ),

    /** The address's verified deployments on every chain. */
    contractOnAllChains(address: string, requestId?: string) {
      checkAddress(address);
      return apiV2.onAllChains(address, requestId);
    },

    /** Verified contracts of a chain, newest first, after the match `afterMatchId`. */
    verifiedContracts(
      chainId: string,
      page: { limit: number; afterMatchId: string | null },
      requestId?: string,
    ) {
      checkChainId(chainId);
      return apiV2.verifiedContracts(chainId, page, requestId);
    },
  };
}

function checkJobId(id: string): void {
  if (!JOB_ID.test(id)) {
    throw new InvalidInputError(
      'id',
      'id is not a verification job id: the service gives its jobs UUIDs, e.g. 72d12273-0723-448e-a9f6-f7957128efa5.',
    );
  }
}

function toChains(items: readonly unknown[], logger: Logger): Chain[] {
  const chains = items.flatMap((item) => WireChain.safeParse(item).data ?? []);
  const skipped = items.length - chains.length;
  if (skipped > 0) logger.warn({ skipped }, 'verification service chains left out');
  return chains;
}
