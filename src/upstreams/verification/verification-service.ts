import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Tracing } from '../../observability/tracing.js';
import { SnapshotCache } from '../snapshot-cache.js';
import { createUpstreamClient, type UpstreamObserver } from '../upstream-client.js';
import { createApiV2 } from './apiv2.js';
import { checkChain, checkContractLocation, checkInput } from './input.js';
import {
  type Chain,
  type Contract,
  EXPLORER_PATHS,
  type VerificationOutcome,
  type VerifyApi,
  type VerifyContractInput,
} from './model.js';
import { createSessionApi } from './session-api.js';
import { isVerificationServiceFailure } from './upstream-answer.js';
import type { UpstreamSession } from './upstream-session.js';
import { WireChain, WireChains } from './wire.js';

export interface VerificationServiceOptions
  extends Omit<Config['verification'], 'sessionCookieSecure'> {
  readonly logger: Logger;
  readonly observer?: UpstreamObserver;
  /** Traces each upstream request (see `UpstreamClientOptions.tracing`). */
  readonly tracing?: Tracing | undefined;
}

/** How long a contract lookup is served from memory. */
const CONTRACT_TTL_MS = 30_000;

/** The contract verification upstream, in either of its APIs. */
export interface VerificationService {
  readonly api: VerifyApi;
  /**
   * Verifies a contract from a block explorer. With the session API, within the caller's upstream
   * session, resolving to the session's contracts; with APIv2, waiting for the job up to the
   * configured time and resolving to its result or to "pending". Rejects with
   * `InvalidInputError`, `VerificationRejectedError`, `RateLimitedError` or an upstream error.
   */
  verifyContract(
    input: VerifyContractInput,
    session: UpstreamSession,
    requestId?: string,
  ): Promise<VerificationOutcome>;
  /** An APIv2 job's current state; null for an unknown id, and always with the session API. */
  verificationJob(id: string, requestId?: string): Promise<VerificationOutcome | null>;
  /** A verified contract (APIv2 lookup), null when not verified. Cached briefly. */
  contract(chainId: string, address: string, requestId?: string): Promise<Contract | null>;
  /** The chains the upstream verifies on; rejects with an upstream error when it has no list. */
  supportedChains(requestId?: string): Promise<readonly Chain[]>;
  /**
   * Shutting down: every verification that is polling its APIv2 job answers `VerificationPending`
   * with the job id at once instead of waiting out `VERIFY_WAIT_MS`.
   */
  close(): void;
}

/** Contract lookups kept in memory at most. */
const CONTRACT_CACHE_ENTRIES = 10_000;

export function createVerificationService(
  options: VerificationServiceOptions,
): VerificationService {
  const { baseUrl, api, chainsTtlMs, waitMs, pollIntervalMs, upstream, logger, observer, tracing } =
    options;
  const client = createUpstreamClient({
    ...upstream,
    baseUrl,
    name: 'verification service',
    logger,
    // Sourcify's own error answers (Etherscan failing behind it, an internal error on one chain)
    // are not the service failing: they never open its circuit for everyone.
    isServiceFailure: isVerificationServiceFailure,
    ...(observer ? { observer } : {}),
    tracing,
  });
  const sessionApi = createSessionApi(client, logger);
  const closing = new AbortController();
  const apiV2 = createApiV2(client, {
    waitMs,
    pollIntervalMs,
    closing: closing.signal,
    chainOf: async (chainId, requestId) =>
      (await knownChains(requestId))?.find((chain) => chain.id === chainId),
  });

  const chains = new SnapshotCache<readonly Chain[]>({
    ttlMs: chainsTtlMs,
    maxStaleMs: 24 * chainsTtlMs,
    // A server without a chain list should not cost a request on every verification.
    failureTtlMs: 60_000,
    load: async (requestId) =>
      toChains(await client.getJson('/chains', WireChains, { requestId }), logger),
  });

  async function knownChains(requestId?: string): Promise<readonly Chain[] | undefined> {
    try {
      return (await chains.get(requestId)).value;
    } catch {
      return undefined;
    }
  }

  const contracts = new Map<string, SnapshotCache<Contract | null>>();
  function contractCache(chainId: string, address: string) {
    const key = contractKey(chainId, address);
    let cache = contracts.get(key);
    if (!cache) {
      if (contracts.size >= CONTRACT_CACHE_ENTRIES) {
        // Maps iterate in insertion order: drop the oldest entry.
        contracts.delete(contracts.keys().next().value ?? key);
      }
      cache = new SnapshotCache<Contract | null>({
        ttlMs: CONTRACT_TTL_MS,
        maxStaleMs: 0,
        load: (requestId) => apiV2.contract(chainId, address, requestId),
      });
      contracts.set(key, cache);
    }
    return cache;
  }

  return {
    api,
    close: () => closing.abort(),

    supportedChains: async (requestId) =>
      (await chains.get(requestId)).value.filter((chain) => chain.supported),

    async verifyContract(input, session, requestId) {
      checkInput(input);
      const list = await knownChains(requestId);
      if (list) checkChain(input.chainId, EXPLORER_PATHS[input.explorer], list);
      const outcome =
        api === 'session'
          ? await sessionApi.verify(input, session, requestId)
          : await apiV2.verify(input, requestId);
      // Lookups made before may say "not verified": the next one asks again.
      if (outcome.kind === 'result') {
        contracts.delete(contractKey(input.chainId, input.address));
        for (const { chainId, address } of outcome.contracts) {
          if (chainId && address) contracts.delete(contractKey(chainId, address));
        }
      }
      return outcome;
    },

    verificationJob: (id, requestId) =>
      api === 'v2' ? apiV2.jobOutcome(id, requestId) : Promise.resolve(null),

    async contract(chainId, address, requestId) {
      checkContractLocation(chainId, address);
      return (await contractCache(chainId, address).get(requestId)).value;
    },
  };
}

const contractKey = (chainId: string, address: string) => `${chainId}:${address.toLowerCase()}`;

function toChains(items: readonly unknown[], logger: Logger): Chain[] {
  const chains: Chain[] = [];
  let skipped = 0;
  for (const item of items) {
    const parsed = WireChain.safeParse(item);
    if (!parsed.success) {
      skipped += 1;
      continue;
    }
    const { chainId, name, supported, etherscanAPI } = parsed.data;
    chains.push({
      id: chainId,
      name,
      supported: supported ?? true,
      explorerVerification: Boolean(etherscanAPI),
    });
  }
  if (skipped > 0) logger.warn({ skipped }, 'verification service chains left out');
  return chains;
}
