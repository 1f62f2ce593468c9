import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { setComponentStatuses } from '../../simulator/src/status-feed/status-rollup.js';
import type { SourcifyChain } from '../../simulator/src/verification/types.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';

interface ChainAnswer {
  id: string;
  statusPage: { slug: string } | null;
  status: string | null;
  softwareVersion: string | null;
  components: { id: string; name: string; version: string | null; page: { slug: string } }[];
}

/**
 * A chain the default page maps, which the verification service lists only while the mismatch test
 * runs: the other tests read every supported chain's components, and see no mapping to fault.
 */
const MISMAPPED: SourcifyChain = {
  name: 'Mismapped',
  chainId: 777,
  rpc: [],
  traceSupportedRPCs: [],
  supported: true,
  etherscanAPI: false,
};

// Hedera names its network components after their software version.
const hedera = createSimulatedFeed({ now: new Date('2026-11-20T12:00:00Z') });
const [hederaMainnet, hederaTestnet] = hedera.summary.components.filter(
  (component) => !component.group,
);
if (!hederaMainnet || !hederaTestnet) throw new Error('two plain components');
hederaMainnet.name = 'Mainnet (v0.58.10) | Network Uptime';
hederaMainnet.status = 'partial_outage';
hederaTestnet.name = 'Testnet (v0.59.0-rc.1) | Network Uptime';
hederaTestnet.status = 'operational';
const ids = { mainnet: hederaMainnet.id, testnet: hederaTestnet.id };

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness({
    simulator: { statusPages: { hedera } },
    env: (simulator) => ({
      // Every read fetches the summary and the chain list again: a test's edits are read at once.
      STATUS_CACHE_TTL_MS: 0,
      VERIFY_CHAINS_TTL_MS: 0,
      STATUS_PAGES_FILE: statusPagesFile([
        {
          slug: 'ledger',
          baseUrl: simulator.statusBaseUrl,
          chains: [
            {
              chainId: MISMAPPED.chainId,
              components: [
                simulator.statusFeed.summary.components.find((c) => !c.group)?.id ?? '',
                'nosuchcomponent1',
              ],
            },
            { chainId: 4242424242, components: [] },
          ],
        },
        {
          slug: 'hedera',
          name: 'Hedera',
          baseUrl: simulator.statusPageUrl('hedera'),
          versionPattern: '\\((v[^)]+)\\)',
          chains: [
            { chainId: 295, components: [ids.mainnet] },
            { chainId: 296, components: [ids.testnet] },
          ],
        },
      ]),
    }),
  });
});
afterAll(() => harness.close());
beforeEach(() => harness.simulator.verification.reset());

describe('chains joined to their status page', () => {
  it('links a supported chain to its page, its components, their status and version', async () => {
    const { body } = await harness.execute<{
      supportedChains: ChainAnswer[];
      statusPage: { name: string; chains: { id: string }[] };
    }>(`{
      supportedChains {
        id statusPage { slug } status softwareVersion
        components { id name version page { slug } }
      }
      statusPage(slug: "hedera") { name chains { id } }
    }`);
    expect(body.errors).toBeUndefined();
    const byId = new Map(body.data?.supportedChains.map((chain) => [chain.id, chain]));
    expect(byId.get('295')).toEqual({
      id: '295',
      statusPage: { slug: 'hedera' },
      status: 'PARTIAL_OUTAGE',
      softwareVersion: 'v0.58.10',
      components: [
        {
          id: ids.mainnet,
          name: 'Mainnet (v0.58.10) | Network Uptime',
          version: 'v0.58.10',
          page: { slug: 'hedera' },
        },
      ],
    });
    expect(byId.get('296')).toMatchObject({
      status: 'OPERATIONAL',
      softwareVersion: 'v0.59.0-rc.1',
    });
    // A chain no page stands for.
    expect(byId.get('1')).toMatchObject({
      statusPage: null,
      status: null,
      softwareVersion: null,
      components: [],
    });
    expect(body.data?.statusPage.chains.map((chain) => chain.id)).toEqual(['295', '296']);
    // The configured name, over the one the feed gives itself.
    expect(body.data?.statusPage.name).toBe('Hedera');
  });

  it("leaves a component's version null on a page without a versionPattern", async () => {
    const { body } = await harness.execute<{ statusPage: { components: { version: null }[] } }>(
      '{ statusPage { components { version } } }',
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.statusPage.components.every((c) => c.version === null)).toBe(true);
  });
});

describe('a chain mapping the upstreams do not bear out', () => {
  it('answers with what exists, and names each id the page or the service lacks beside the field, with where it is configured', async () => {
    harness.simulator.verification.setChains([...harness.simulator.verification.chains, MISMAPPED]);
    const mapped = harness.simulator.statusFeed.summary.components.find((c) => !c.group);
    const existing = mapped?.id;
    const statusBefore = mapped?.status ?? 'operational';
    const { body } = await harness.execute<{
      statusPage: { chains: { id: string; components: { id: string }[] }[] };
    }>('{ statusPage { chains { id components { id } } } }');
    expect(body.data?.statusPage.chains).toEqual([{ id: '777', components: [{ id: existing }] }]);
    expect(body.errors).toEqual([
      expect.objectContaining({
        path: ['statusPage', 'chains'],
        message:
          "The verification service does not list as supported chain 4242424242 (STATUS_PAGES_FILE pages[0].chains[1].chainId): the page's chains leave it out.",
        extensions: {
          code: 'CONFIGURATION_MISMATCH',
          missing: ['4242424242'],
          configured: ['STATUS_PAGES_FILE pages[0].chains[1].chainId'],
        },
      }),
      expect.objectContaining({
        path: ['statusPage', 'chains', 0, 'components'],
        message:
          "The status page ledger lists no component nosuchcomponent1, which STATUS_PAGES_FILE pages[0].chains[0].components maps to chain 777: the chain's fields leave it out.",
        extensions: {
          code: 'CONFIGURATION_MISMATCH',
          missing: ['nosuchcomponent1'],
          configured: 'STATUS_PAGES_FILE pages[0].chains[0].components',
        },
      }),
    ]);
    // Logged for the operator too, each once (whichever test read them first), with where the file
    // says so.
    const told = () =>
      harness.logs.filter(
        (line) =>
          line.configured === 'STATUS_PAGES_FILE page ledger chains[0].components' ||
          line.configured === 'STATUS_PAGES_FILE pages[0].chains[1].chainId (page ledger)',
      );
    await eventually(() => told().length === 2 || undefined);
    expect(told().map((line) => line.level)).toEqual([40, 40]);
    // Another summary with the same mistake (its one mapped component now down) is not told again.
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [existing ?? '']: 'major_outage' }),
    );
    await eventually(async () => {
      const { body: again } = await harness.execute<{
        statusPage: { chains: { status: string }[] };
      }>('{ statusPage { chains { status } } }');
      return again.data?.statusPage.chains[0]?.status === 'MAJOR_OUTAGE' || undefined;
    });
    expect(told()).toHaveLength(2);
    harness.simulator.updateStatusFeed((feed) =>
      setComponentStatuses(feed, { [existing ?? '']: statusBefore }),
    );
  });
});
