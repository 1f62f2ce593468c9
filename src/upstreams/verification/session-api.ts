import type { Logger } from 'pino';
import { toEnumValue } from '../../core/enum-value.js';
import { UpstreamUnavailableError } from '../../errors/upstream-unavailable-error.js';
import { parseJsonBody, type UpstreamClient, type UpstreamResponse } from '../upstream-client.js';
import { explorerFailure } from './explorer-failure.js';
import {
  EXPLORER_PATHS,
  VERIFICATION_STATUSES,
  type VerificationResult,
  type VerifiedContract,
  type VerifyContractInput,
} from './model.js';
import {
  bodyAs,
  isRouteNotFound,
  isSourcifyErrorBody,
  statusFailure,
  upstreamMessage,
} from './upstream-answer.js';
import type { UpstreamSession } from './upstream-session.js';
import { WireErrorBody, WireSessionResponse } from './wire.js';

/**
 * Sourcify's session API (the seed's interface B): `POST /session/verify/{explorer}` within the
 * caller's cookie session, answered with every contract of the session. Servers from
 * sourcify-server 3.10 on have no session API: they answer Express's 404 page, which is an
 * operator's mistake (`VERIFY_API=v2` is needed), logged once at error level.
 */
export function createSessionApi(client: UpstreamClient, logger: Logger) {
  let toldOperator = false;
  return {
    async verify(
      input: VerifyContractInput,
      session: UpstreamSession,
      requestId: string | undefined,
    ): Promise<VerificationResult> {
      const { cookieHeader } = session;
      const response = await client.postJson(
        `/session/verify/${EXPLORER_PATHS[input.explorer]}`,
        // Sent as JSON: an apiKey left undefined is not sent.
        { address: input.address, chainId: input.chainId, apiKey: input.apiKey || undefined },
        { requestId, ...(cookieHeader ? { headers: { cookie: cookieHeader } } : {}) },
      );
      session.absorb(response.headers);
      if (isRouteNotFound(response)) {
        const { endpoint, status } = response;
        if (!toldOperator) {
          toldOperator = true;
          logger.error(
            { upstream: endpoint.upstream, path: endpoint.path },
            `verification service has no session API: ${NO_SESSION_API}`,
          );
        }
        throw new UpstreamUnavailableError(endpoint, NO_SESSION_API, { status });
      }
      return interpret(response, input.apiKey ?? undefined);
    },
  };
}

const NO_SESSION_API =
  'it has no session API (Sourcify removed it in sourcify-server 3.10); the gateway must be configured with VERIFY_API=v2';

function interpret(response: UpstreamResponse, apiKey: string | undefined): VerificationResult {
  const { status } = response;
  if (status >= 200 && status < 300) {
    const body = parseJsonBody(response, WireSessionResponse);
    return {
      kind: 'result',
      contracts: body.contracts.map(
        (contract): VerifiedContract => ({
          ...contract,
          status: toEnumValue(VERIFICATION_STATUSES, contract.status),
        }),
      ),
      unused: body.unused,
      alreadyVerified: false,
      job: null,
    };
  }
  const body = bodyAs(WireErrorBody, response.text);
  const message = upstreamMessage(body?.error ?? body?.message, apiKey);
  // Sourcify answers 502 with its own error only when the explorer failed behind it.
  if (status === 502 && isSourcifyErrorBody(response.text)) {
    throw explorerFailure(message, status, apiKey, undefined);
  }
  throw statusFailure(response, message);
}
