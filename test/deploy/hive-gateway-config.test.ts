import { createGatewayRuntime, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayConfig, SESSION_COOKIE } from '../../deploy/gateway.config.js';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { printSchemaDocument } from '../../src/schema/print.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { sessionEra } from '../helpers/session-era.js';

const VERIFY = /* GraphQL */ `
  mutation Verify($input: VerifyContractInput!) {
    verifyContract(input: $input) {
      __typename
      ... on VerificationResult {
        contracts {
          address
        }
      }
    }
  }
`;

interface VerifyResult {
  data?: { verifyContract: { __typename: string; contracts?: { address: string | null }[] } };
  errors?: unknown[];
}

const [first, second] = VERIFIABLE_CONTRACTS;
if (!first || !second) throw new Error('the simulator knows at least two contracts');

describe('deploy/gateway.config.ts', () => {
  const { propagateHeaders } = gatewayConfig;
  const context = {} as never;

  it('forwards only the session cookie to subgraphs', async () => {
    const request = (cookie?: string) =>
      new Request('http://router/graphql', cookie ? { headers: { cookie } } : {});
    const forward = (cookie?: string) =>
      propagateHeaders?.fromClientToSubgraphs?.({
        request: request(cookie),
        context,
        subgraphName: 'ledger-status',
      });

    expect(await forward(`theme=dark; ${SESSION_COOKIE}=abc-123; other=1`)).toEqual({
      cookie: `${SESSION_COOKIE}=abc-123`,
    });
    expect(await forward('theme=dark; not_verify_session=1')).toEqual({});
    expect(await forward()).toEqual({});
  });

  it('passes back only the session cookie a subgraph sets', async () => {
    const headers = new Headers();
    headers.append('set-cookie', `${SESSION_COOKIE}=abc; Path=/graphql; HttpOnly; SameSite=Lax`);
    headers.append('set-cookie', 'tracking=1; Path=/');
    const back = await propagateHeaders?.fromSubgraphsToClient?.({
      response: new Response(null, { headers }),
      context,
      subgraphName: 'ledger-status',
    });
    expect(back).toEqual({
      'set-cookie': [`${SESSION_COOKIE}=abc; Path=/graphql; HttpOnly; SameSite=Lax`],
    });
  });

  describe('in Hive Gateway, in front of the gateway', () => {
    let harness: Harness;
    let router: GatewayRuntime;

    beforeAll(async () => {
      harness = await startHarness(sessionEra({ logLevel: 'silent' }));
      const url = `${harness.origin}/graphql`;
      const composed = composeServices([
        { name: 'ledger-status', url, typeDefs: parse(printSchemaDocument()) },
      ]);
      expect(composed.errors?.map((error) => error.message)).toBeUndefined();
      if (!composed.supergraphSdl) throw new Error('no supergraph');
      router = createGatewayRuntime({
        supergraph: composed.supergraphSdl,
        logging: false,
        propagateHeaders,
      });
    });

    afterAll(async () => {
      await router?.dispose();
      await harness?.close();
    });

    async function verify(input: { address: string; chainId: string }, cookie?: string) {
      const response = await router.fetch('http://router/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
        body: JSON.stringify({ query: VERIFY, variables: { input } }),
      });
      const body = (await response.json()) as VerifyResult;
      expect(body.errors).toBeUndefined();
      expect(body.data?.verifyContract.__typename).toBe('VerificationResult');
      const addresses = (body.data?.verifyContract.contracts ?? []).map((c) => c.address).sort();
      return { addresses, setCookies: response.headers.getSetCookie() };
    }

    it('keeps one client in one upstream session across calls', async () => {
      const firstCall = await verify({ address: first.address, chainId: first.chainId });
      expect(firstCall.addresses).toEqual([first.address]);
      const [setCookie] = firstCall.setCookies;
      expect(setCookie).toMatch(new RegExp(`^${SESSION_COOKIE}=[^;]+;.*Path=/graphql`));

      const cookie = setCookie?.split(';')[0];
      const secondCall = await verify({ address: second.address, chainId: second.chainId }, cookie);
      expect(secondCall.addresses).toEqual([first.address, second.address].sort());

      // Without the cookie, a new client gets a new session.
      const stranger = await verify({ address: second.address, chainId: second.chainId });
      expect(stranger.addresses).toEqual([second.address]);
    });
  });
});
