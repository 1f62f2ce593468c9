import type { Logger } from 'pino';
import { toEnumValue } from '../enum-value.js';
import { UpstreamUnavailableError } from '../errors.js';
import { SnapshotCache } from '../snapshot-cache.js';
import {
  createUpstreamClient,
  parseJsonBody,
  type UpstreamClientOptions,
  type UpstreamResponse,
} from '../upstream-client.js';
import { RateLimitedError, VerificationRejectedError } from './errors.js';
import { checkChain, checkInput } from './input.js';
import {
  type Chain,
  EXPLORER_PATHS,
  VERIFICATION_STATUSES,
  type VerificationResult,
  type VerifiedContract,
  type VerifyContractInput,
} from './model.js';
import type { UpstreamSession } from './upstream-session.js';
import {
  WireChain,
  WireChains,
  WireErrorBody,
  WireSessionResponse,
  type WireVerifiedContract,
} from './wire.js';

export interface VerificationServiceOptions extends Omit<UpstreamClientOptions, 'name' | 'logger'> {
  /**
   * How long the upstream's chain list is trusted before it is fetched again.
   * @default 3600000
   */
  readonly chainsTtlMs?: number;
  readonly logger: Logger;
}

/** The contract verification upstream (Sourcify's session API). */
export interface VerificationService {
  /**
   * Verifies a contract from a block explorer within the caller's upstream session. Resolves to
   * the session's contracts; rejects with `InvalidInputError`, `VerificationRejectedError`,
   * `RateLimitedError` or an upstream error.
   */
  verifyContract(
    input: VerifyContractInput,
    session: UpstreamSession,
    requestId?: string,
  ): Promise<VerificationResult>;
  /** The chains the upstream verifies on; rejects with an upstream error when it has no list. */
  supportedChains(requestId?: string): Promise<readonly Chain[]>;
}

const LONGEST_MESSAGE = 500;

export function createVerificationService(
  options: VerificationServiceOptions,
): VerificationService {
  const { chainsTtlMs = 3_600_000, logger, ...clientOptions } = options;
  const client = createUpstreamClient({ ...clientOptions, name: 'verification service', logger });

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

  return {
    supportedChains: async (requestId) =>
      (await chains.get(requestId)).value.filter((chain) => chain.supported),

    async verifyContract(input, session, requestId) {
      checkInput(input);
      const explorer = EXPLORER_PATHS[input.explorer];
      const list = await knownChains(requestId);
      if (list) checkChain(input.chainId, explorer, list);

      const { cookieHeader } = session;
      const response = await client.postJson(
        `/session/verify/${explorer}`,
        {
          address: input.address,
          chainId: input.chainId,
          ...(input.apiKey ? { apiKey: input.apiKey } : {}),
        },
        { requestId, ...(cookieHeader ? { headers: { cookie: cookieHeader } } : {}) },
      );
      session.absorb(response.headers);
      return interpret(response, input.apiKey ?? undefined);
    },
  };
}

function interpret(response: UpstreamResponse, apiKey: string | undefined): VerificationResult {
  const { status } = response;
  if (status >= 200 && status < 300) {
    const body = parseJsonBody(response, WireSessionResponse);
    return { contracts: body.contracts.map(toVerifiedContract), unused: body.unused };
  }
  const message = upstreamMessage(response, apiKey);
  if (status === 429) {
    throw new RateLimitedError(
      message ?? 'The verification service is rate limiting requests; try again later.',
      retryAfterSeconds(response.headers.get('retry-after')),
    );
  }
  if (status >= 400 && status < 500) {
    throw new VerificationRejectedError(
      message ?? `The verification service refused the request (HTTP ${status}).`,
      status,
    );
  }
  throw new UpstreamUnavailableError(response.endpoint, `it answered HTTP ${status}`, { status });
}

/**
 * The upstream's own explanation, when it gave one as JSON. Any echo of the caller's API key is
 * cut out: the key goes upstream and nowhere else.
 */
function upstreamMessage(
  response: UpstreamResponse,
  apiKey: string | undefined,
): string | undefined {
  let message: string | undefined;
  try {
    const body = WireErrorBody.safeParse(JSON.parse(response.text));
    message = body.success ? (body.data.error ?? body.data.message) : undefined;
  } catch {
    return undefined;
  }
  if (!message?.trim()) return undefined;
  const scrubbed = apiKey ? message.replaceAll(apiKey, '[redacted]') : message;
  return scrubbed.length > LONGEST_MESSAGE ? `${scrubbed.slice(0, LONGEST_MESSAGE)}…` : scrubbed;
}

/** `Retry-After` in seconds, from either of its forms (seconds, or an HTTP date). */
export function retryAfterSeconds(header: string | null): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

function toVerifiedContract(wire: WireVerifiedContract): VerifiedContract {
  return {
    verificationId: wire.verificationId,
    compiledPath: wire.compiledPath,
    name: wire.name,
    compilerVersion: wire.compilerVersion,
    address: wire.address,
    chainId: wire.chainId,
    files: wire.files,
    status: toEnumValue(VERIFICATION_STATUSES, wire.status),
    statusMessage: wire.statusMessage,
    storageTimestamp: wire.storageTimestamp,
  };
}

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
