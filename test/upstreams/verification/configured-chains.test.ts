import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.js';
import { statusPagesFile } from '../../helpers/status-pages-file.js';

/*
 * A chain id STATUS_PAGES_FILE maps to a page that the verification service does not list (or
 * lists as unsupported) drops out of the page's chains: the log says where it is configured,
 * once, when the service's chain list is fetched.
 */

describe('configured chains the verification service does not support', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({
      env: (simulator) => ({
        STATUS_PAGES_FILE: statusPagesFile([
          {
            slug: 'ledger',
            baseUrl: simulator.statusBaseUrl,
            chains: [
              { chainId: 1, components: [] },
              { chainId: 424242, components: [] },
              // Goerli: listed by Sourcify, deprecated.
              { chainId: 5, components: [] },
            ],
          },
        ]),
      }),
    });
  });
  afterAll(() => harness.close());

  const told = () =>
    harness.logs.filter((line) => line.level === 40 && typeof line.configured === 'string');

  it('are logged once each, naming where they are configured, when the chain list is fetched', async () => {
    const query = '{ statusPage(slug: "ledger") { chains { id } } }';
    const { body } = await harness.execute<{ statusPage: { chains: { id: string }[] } }>(query);
    expect(body.data?.statusPage.chains).toEqual([{ id: '1' }]);
    expect(told().map((line) => [line.chainId, line.configured])).toEqual([
      ['424242', 'STATUS_PAGES_FILE pages[0].chains[1].chainId (page ledger)'],
      ['5', 'STATUS_PAGES_FILE pages[0].chains[2].chainId (page ledger)'],
    ]);
    expect(told()[0]?.msg).toContain(
      "chain 424242 is not in the verification service's chain list",
    );
    expect(told()[1]?.msg).toContain(
      'chain 5 (Goerli) is listed by the verification service as unsupported',
    );
    await harness.execute(query);
    await harness.execute('{ supportedChains { id } }');
    expect(told()).toHaveLength(2);
  });
});
