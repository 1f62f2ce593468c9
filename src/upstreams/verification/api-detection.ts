import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { UpstreamUnavailableError } from '../../errors/upstream-unavailable-error.js';
import type { UpstreamClient } from '../upstream-client.js';
import type { VerifyApi } from './model.js';
import { configuredUrl, ServiceUnreachableError } from './unreachable.js';
import { bodyAs, isRouteNotFound } from './upstream-answer.js';
import { WireV2Error } from './wire-v2.js';

/**
 * The job the probe asks for: a well-formed id no job has. APIv2 answers it with its own JSON
 * (`job_not_found`), a server without APIv2 with Express's HTML 404 page. Nothing is created.
 */
export const PROBE_PATH = '/v2/verify/00000000-0000-0000-0000-000000000000';

export interface ApiDetectionOptions {
  /** `VERIFY_API`: `session` and `v2` are used as they are; `auto` asks the server. */
  readonly setting: Config['verification']['api'];
  readonly client: Pick<UpstreamClient, 'get'>;
  readonly logger: Pick<Logger, 'info' | 'warn'>;
  /** VERIFY_BASE_URL, for the log line that says the service is unreachable. */
  readonly baseUrl: string;
  /**
   * How long a probe that got no answer at all is remembered (CIRCUIT_COOLDOWN_MS): calls meanwhile
   * answer its failure at once instead of each waiting out the probe's retries.
   */
  readonly cooldownMs: number;
  /** Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * Which API the verification service speaks. With `VERIFY_API=auto` the server is asked once
 * (concurrent callers share the question), the answer is remembered, and forgotten after a failure
 * that suggests the server changed (`rechecking`), so that the next call asks again. A probe the
 * server did not answer at all (it is down) is remembered for `cooldownMs` and logged once: the
 * calls meanwhile fail at once, not after the probe's retries each. A server
 * with both APIs (sourcify-server 3.9.1) is spoken to in APIv2: the session API is gone from
 * Sourcify, and only APIv2 has jobs, source verification and the bulk lookups.
 */
export function createApiDetection(options: ApiDetectionOptions) {
  const { setting, client, logger, cooldownMs, now = Date.now } = options;
  let known: VerifyApi | undefined = setting === 'auto' ? undefined : setting;
  let asking: Promise<VerifyApi> | undefined;
  /** The last answer, kept across `rechecking`: a change is logged as one. */
  let last: VerifyApi | undefined;
  /** The last probe, unanswered, and until when it stands for the service. */
  let unreachable: { error: ServiceUnreachableError; until: number } | undefined;

  /** The probe failing: remembered for the cooldown when nothing answered it. */
  function remember(error: unknown): never {
    if (error instanceof ServiceUnreachableError && cooldownMs > 0) {
      unreachable = { error, until: now() + cooldownMs };
      logger.warn(
        { upstream: 'verification service', baseUrl: configuredUrl(options.baseUrl) },
        `verification service unreachable at ${configuredUrl(options.baseUrl)} (VERIFY_BASE_URL): ${error.reason}; verifications fail at once for ${Math.ceil(cooldownMs / 1000)} s (CIRCUIT_COOLDOWN_MS), then it is asked again`,
      );
    }
    throw error;
  }

  /** The remembered failure, told with when the service is asked again; undefined once over. */
  function stillUnreachable(): ServiceUnreachableError | undefined {
    if (!unreachable) return undefined;
    const left = unreachable.until - now();
    if (left <= 0) {
      unreachable = undefined;
      return undefined;
    }
    const { endpoint, reason } = unreachable.error;
    return new ServiceUnreachableError(
      endpoint,
      `${reason}; the gateway asks it again in ${Math.ceil(left / 1000)} s`,
    );
  }

  async function ask(requestId: string | undefined): Promise<VerifyApi> {
    const response = await client.get(PROBE_PATH, { requestId });
    const isV2 = bodyAs(WireV2Error, response.text) !== undefined || response.status === 200;
    if (!isV2 && !isRouteNotFound(response)) {
      throw new UpstreamUnavailableError(
        response.endpoint,
        `it answered HTTP ${response.status} to the gateway's question which API it speaks (VERIFY_API=auto), neither APIv2's answer nor a missing route; set VERIFY_API to session or v2`,
        { status: response.status },
      );
    }
    const api: VerifyApi = isV2 ? 'v2' : 'session';
    known = api;
    if (api !== last) {
      const log = last === undefined ? logger.info : logger.warn;
      log.call(
        logger,
        { upstream: 'verification service', api, previously: last ?? null },
        api === 'v2'
          ? 'verification service speaks APIv2 (VERIFY_API=auto)'
          : 'verification service has no APIv2: using its session API (VERIFY_API=auto)',
      );
    }
    last = api;
    return api;
  }

  return {
    /** The API known now, without asking; undefined until the first answer (`auto`). */
    get known(): VerifyApi | undefined {
      return known;
    },

    /** The API to speak; rejects with the upstream's error when the server cannot be asked. */
    api(requestId?: string): Promise<VerifyApi> {
      if (known) return Promise.resolve(known);
      const failed = stillUnreachable();
      if (failed) return Promise.reject(failed);
      asking ??= ask(requestId)
        .catch(remember)
        .finally(() => {
          asking = undefined;
        });
      return asking;
    },

    /**
     * Runs `work`, and forgets the answer after a failure that suggests the server is not what it
     * was: it could not be reached, failed, or had no route for the API spoken. Forced settings
     * never change.
     */
    async rechecking<T>(work: () => Promise<T>): Promise<T> {
      try {
        return await work();
      } catch (error) {
        if (setting === 'auto' && error instanceof UpstreamUnavailableError) known = undefined;
        throw error;
      }
    },
  };
}
