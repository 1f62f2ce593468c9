import type { UpstreamEndpoint } from '../../errors/upstream-error.js';
import { UpstreamUnavailableError } from '../../errors/upstream-unavailable-error.js';
import type { RequestOptions, UpstreamClient } from '../upstream-client.js';

/*
 * The verification service not answering at all (the connection failed, no answer in time, its
 * circuit open), said in the terms of what the user configured, VERIFY_BASE_URL, rather than by
 * a path of its API the user never asked for (the API probe's
 * `GET /v2/verify/00000000-0000-0000-0000-000000000000`, a job's poll). The message names the
 * setting, not the host: an answer never holds a host (`ExpectedError`); the log does.
 */

/** The verification service answered nothing: it is down, or VERIFY_BASE_URL points elsewhere. */
export class ServiceUnreachableError extends UpstreamUnavailableError {
  constructor(endpoint: UpstreamEndpoint, reason: string, options: { cause?: unknown } = {}) {
    super(endpoint, reason, options);
    this.message = `The verification service at VERIFY_BASE_URL is unreachable: ${reason}.`;
  }
}

/** `error` in the user's terms when it is the service answering nothing; else as it is. */
export function inUserTerms(error: unknown): unknown {
  if (
    !(error instanceof UpstreamUnavailableError) ||
    error instanceof ServiceUnreachableError ||
    error.status !== undefined
  ) {
    return error;
  }
  return new ServiceUnreachableError(error.endpoint, error.reason, { cause: error.cause });
}

const rethrow = (error: unknown): never => {
  throw inUserTerms(error);
};

/** `client`, its failures to get any answer from the service in the user's terms. */
export function reportingUnreachable(client: UpstreamClient): UpstreamClient {
  return {
    ...client,
    get: (path: string, options?: RequestOptions) => client.get(path, options).catch(rethrow),
    postJson: (path: string, json: unknown, options?: RequestOptions) =>
      client.postJson(path, json, options).catch(rethrow),
    getJson: (...args) => client.getJson(...args).catch(rethrow),
    getSizedJson: (...args) => client.getSizedJson(...args).catch(rethrow),
  };
}

/** The configured base URL as a log may show it: without credentials, query or fragment. */
export function configuredUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.origin}${url.pathname}`;
}
