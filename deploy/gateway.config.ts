/**
 * Hive Gateway configuration for the compose stack: docker-compose.yml mounts it at
 * /gateway/gateway.config.ts, which the image's `hive-gateway` CLI loads from its working directory.
 *
 * The ledger status subgraph keeps each client's verification session in its own `verify_session`
 * cookie (see src/plugins/use-verification-session.ts). A federation gateway forwards neither the
 * client's cookies to subgraphs nor a subgraph's Set-Cookie back to the client unless told to, so
 * without this every `verifyContract` made through Hive Gateway would start a new session. Only that
 * one cookie crosses, in both directions: other subgraphs composed later never see it, and no other
 * cookie of the client reaches a subgraph.
 *
 * Only a type is imported (erased when Hive Gateway loads the file), so it runs in the image as is.
 */
import type { GatewayConfigSupergraph } from '@graphql-hive/gateway-runtime';

export const SESSION_COOKIE = 'verify_session';

const propagateHeaders: GatewayConfigSupergraph['propagateHeaders'] = {
  fromClientToSubgraphs({ request }) {
    const session = (request.headers.get('cookie') ?? '')
      .split(';')
      .map((pair) => pair.trim())
      .filter((pair) => pair.slice(0, pair.indexOf('=')).trim() === SESSION_COOKIE);
    return session.length > 0 ? { cookie: session.join('; ') } : {};
  },
  fromSubgraphsToClient({ response }) {
    const cookies = response.headers
      .getSetCookie()
      .filter((header) => header.trimStart().startsWith(`${SESSION_COOKIE}=`));
    return cookies.length > 0 ? { 'set-cookie': cookies } : {};
  },
};

export const gatewayConfig = { propagateHeaders };
