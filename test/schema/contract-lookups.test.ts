import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureContract } from '../../simulator/src/verification/fixture.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { copyAt } from '../helpers/schema-contracts.js';

/* contracts, contractOnAllChains and verifiedContracts against today's Sourcify. */

const WETH = fixtureContract('WETH9');
const DAI = fixtureContract('Dai');
const USDC = fixtureContract('FiatTokenProxy');
const CONCURRENCY = 4;
const LOOKUPS = '/verify/v2/contract/1/';

const CONTRACTS = /* GraphQL */ `
  query ($addresses: [String!]!) {
    contracts(chainId: "1", addresses: $addresses) { address match name matchId }
  }
`;

type Contract = { address: string; match: string; name: string; matchId: string };

/** `n` addresses nobody verified, from the `from`th. */
const unverified = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `0x${(from + i + 1).toString(16).padStart(40, '0')}`);

/*
 * One gateway for the file, its verification service put back as it started before each test.
 * Lookups are kept VERIFY_LOOKUP_TTL_MS: a test that counts its own asks about contracts no other
 * test asks about.
 */
let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({
    env: {
      VERIFY_LOOKUP_CONCURRENCY: CONCURRENCY,
      VERIFY_LOOKUP_TTL_MS: 50,
      VERIFY_WAIT_MS: 3_000,
      VERIFY_POLL_INTERVAL_MS: 20,
    },
  });
});
afterAll(() => harness.close());
beforeEach(() => {
  harness.simulator.verification.reset();
  harness.simulator.clearFaults();
  harness.simulator.resetRequests();
});

describe('Query.contracts', () => {
  it('looks 100 addresses up in one request, in order, null where not verified, at most VERIFY_LOOKUP_CONCURRENCY at once', async () => {
    expect(harness.simulator.concurrency(LOOKUPS).peak).toBe(0);
    // WETH9 at an address of this test's own, verified as WETH9 is.
    const weth = copyAt(WETH);
    harness.simulator.verification.addContract(weth);
    harness.simulator.setFault('verify', '*', { kind: 'delay', ms: 20 });
    const addresses = [weth.address, ...unverified(99, 1_000)];
    const { body } = await harness.execute<{ contracts: (Contract | null)[] }>(CONTRACTS, {
      addresses,
    });
    expect(body.errors).toBeUndefined();
    expect(body.data?.contracts).toHaveLength(100);
    expect(body.data?.contracts[0]).toMatchObject({
      address: weth.address,
      match: 'PERFECT',
      name: WETH.name,
    });
    expect(body.data?.contracts.slice(1).every((contract) => contract === null)).toBe(true);
    const { peak } = harness.simulator.concurrency(LOOKUPS);
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(CONCURRENCY);
    expect(harness.simulator.requests.filter((r) => r.path.startsWith(LOOKUPS))).toHaveLength(100);
  });

  it('refuses more than 100 addresses, and a bad one by its index, before asking the service', async () => {
    const tooMany = await harness.execute(CONTRACTS, { addresses: unverified(101) });
    expect(tooMany.body.data).toBeNull();
    expect(tooMany.body.errors?.[0]).toMatchObject({
      extensions: { code: 'BAD_USER_INPUT', field: 'addresses' },
    });
    expect(tooMany.body.errors?.[0]?.message).toContain('at most 100');
    const bad = await harness.execute(CONTRACTS, {
      addresses: [...unverified(3), '0x1234'],
    });
    expect(bad.body.errors?.[0]).toMatchObject({
      extensions: { code: 'BAD_USER_INPUT', field: 'addresses[3]' },
    });
    expect(harness.simulator.requestCount()).toBe(0);
  });

  it("revalidates a lookup with the service's ETag: a 304 costs no body and answers the same", async () => {
    const query = `{ contract(chainId: "1", address: "${WETH.address}") { address match matchId name verifiedAt } }`;
    const first = await harness.execute(query);
    expect(first.body.errors).toBeUndefined();
    const before = harness.simulator.verification.notModified;
    const answers = await eventually(async () => {
      const again = await harness.execute(query);
      return harness.simulator.verification.notModified > before && again;
    });
    expect(answers.body).toEqual(first.body);
    const conditional = harness.simulator.requests.filter(
      (request) => request.path.startsWith(LOOKUPS) && request.headers['if-none-match'],
    );
    expect(conditional.length).toBeGreaterThan(0);
  });
});

describe('list answers of a real sourcify-server 3.12.1, replayed', () => {
  // Captured 2026-11-29 (../shared/sourcify/answers.md, section 5): minimal contracts, no compilation.
  const ALL_CHAINS = `{"results":[{"match":"exact_match","creationMatch":"exact_match","runtimeMatch":"exact_match","matchId":"1","chainId":"1","address":"0x5FbDB2315678afecb367f032d93F642f64180aa3","verifiedAt":"2026-11-29T06:09:57Z"}]}`;
  const CONTRACTS_PAGE = `{"results":[{"match":"exact_match","creationMatch":"exact_match","runtimeMatch":"exact_match","chainId":"1","address":"0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512","verifiedAt":"2026-11-29T06:10:13Z","matchId":"2"},{"match":"exact_match","creationMatch":"exact_match","runtimeMatch":"exact_match","chainId":"1","address":"0x5FbDB2315678afecb367f032d93F642f64180aa3","verifiedAt":"2026-11-29T06:09:57Z","matchId":"1"}]}`;
  it('answers every field of ContractMatch, and none that the lists cannot give', async () => {
    const { simulator } = harness;
    simulator.verification.setServerVersion('3.12.1');
    const replay = (path: string, body: string) =>
      simulator.setFault('verify', path, {
        kind: 'status',
        status: 200,
        body,
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
    replay('/v2/contract/all-chains/0x5FbDB2315678afecb367f032d93F642f64180aa3', ALL_CHAINS);
    replay('/v2/contracts/1', CONTRACTS_PAGE);
    const FIELDS = '__typename chainId address match creationMatch runtimeMatch verifiedAt matchId';
    const { body } = await harness.execute<{
      all: unknown[];
      page: { nodes: { address: string; matchId: string }[] };
    }>(`{
      all: contractOnAllChains(address: "0x5FbDB2315678afecb367f032d93F642f64180aa3") { ${FIELDS} }
      page: verifiedContracts(chainId: "1", first: 2) { nodes { ${FIELDS} } }
    }`);
    expect(body.errors).toBeUndefined();
    const first = {
      __typename: 'ContractMatch',
      chainId: '1',
      address: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
      match: 'PERFECT',
      creationMatch: 'PERFECT',
      runtimeMatch: 'PERFECT',
      verifiedAt: '2026-11-29T06:09:57.000Z',
      matchId: '1',
    };
    expect(body.data?.all).toEqual([first]);
    expect(body.data?.page.nodes).toEqual([
      {
        ...first,
        address: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
        verifiedAt: '2026-11-29T06:10:13.000Z',
        matchId: '2',
      },
      first,
    ]);
  });
});

describe('Query.contractOnAllChains and Query.verifiedContracts', () => {
  beforeEach(async () => {
    harness.simulator.verification.setJobDelay(0);
    // Two more matches on chain 1, after WETH's.
    for (const contract of [DAI, USDC]) {
      const { body } = await harness.execute<{ verifyContract: { __typename: string } }>(
        'mutation ($input: VerifyContractInput!) { verifyContract(input: $input) { __typename } }',
        { input: { address: contract.address, chainId: contract.chainId } },
      );
      expect(body.data?.verifyContract.__typename).toBe('VerificationResult');
    }
  });

  it('finds an address on every chain it is verified on, and nowhere else', async () => {
    const { body } = await harness.execute<{
      weth: { chainId: string; match: string }[];
      nobody: unknown[];
    }>(`{
      weth: contractOnAllChains(address: "${WETH.address.toLowerCase()}") { chainId match }
      nobody: contractOnAllChains(address: "${unverified(1)[0]}") { chainId }
    }`);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({ weth: [{ chainId: '1', match: 'PERFECT' }], nobody: [] });
  });

  const PAGE = /* GraphQL */ `
    query ($first: Int, $after: String) {
      verifiedContracts(chainId: "1", first: $first, after: $after) {
        edges { cursor node { address } }
        nodes { address }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  `;
  type Page = {
    verifiedContracts: {
      edges: { cursor: string; node: { address: string } }[];
      nodes: { address: string }[];
      pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor: string | null };
    };
  };

  it('pages a chain newest first with opaque cursors', async () => {
    const first = await harness.execute<Page>(PAGE, { first: 2 });
    expect(first.body.errors).toBeUndefined();
    const page = first.body.data?.verifiedContracts;
    expect(page?.nodes.map((node) => node.address)).toEqual([USDC.address, DAI.address]);
    expect(page?.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(page?.pageInfo.endCursor).toBe(page?.edges[1]?.cursor);
    const next = await harness.execute<Page>(PAGE, { first: 2, after: page?.pageInfo.endCursor });
    expect(next.body.data?.verifiedContracts.nodes).toEqual([{ address: WETH.address }]);
    expect(next.body.data?.verifiedContracts.pageInfo).toMatchObject({
      hasNextPage: false,
      hasPreviousPage: true,
    });
    const lists = harness.simulator.requests.filter((r) => r.path === '/verify/v2/contracts/1');
    expect(new URLSearchParams(lists.at(-1)?.search).get('sort')).toBe('desc');
  });

  it("lists ContractMatch items, which have no name to be null: a page's addresses give them through contracts", async () => {
    const { body } = await harness.execute<{
      verifiedContracts: { nodes: { __typename: string; address: string; match: string }[] };
      all: { __typename: string; match: string; matchId: string | null }[];
    }>(`{
      verifiedContracts(chainId: "1", first: 3) { nodes { __typename address match } }
      all: contractOnAllChains(address: "${WETH.address}") { __typename match matchId }
    }`);
    expect(body.errors).toBeUndefined();
    const nodes = body.data?.verifiedContracts.nodes ?? [];
    expect(nodes.map((node) => node.__typename)).toEqual(Array(3).fill('ContractMatch'));
    expect(body.data?.all).toEqual([
      { __typename: 'ContractMatch', match: 'PERFECT', matchId: expect.stringMatching(/^\d+$/) },
    ]);
    // The list routes answer no compilation: asking a list for a name is a validation error.
    const named = await harness.execute(
      '{ verifiedContracts(chainId: "1") { nodes { name compilerVersion } } }',
    );
    expect(named.body.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED' });
    const { body: details } = await harness.execute<{ contracts: Contract[] }>(CONTRACTS, {
      addresses: nodes.map((node) => node.address),
    });
    expect(
      details.data?.contracts.map(({ address, match, name }) => ({ address, match, name })),
    ).toEqual(
      [USDC, DAI, WETH].map(({ address, name }, i) => ({ address, match: nodes[i]?.match, name })),
    );
    expect(nodes.map((node) => node.match)).toEqual(['PARTIAL', 'PERFECT', 'PERFECT']);
  });

  it.each([
    ['first', { first: 0 }],
    ['first', { first: 101 }],
    ['after', { after: 'not-a-cursor' }],
    ['after', { after: Buffer.from('contracts:5:12').toString('base64url') }],
  ])('refuses a bad %s', async (field, variables) => {
    const { body } = await harness.execute(PAGE, variables);
    expect(body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT', field } });
  });
});
