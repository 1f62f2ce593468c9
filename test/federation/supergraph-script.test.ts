/**
 * `npm run supergraph` (scripts/supergraph.ts): Hive Gateway in front of the gateway offline, as
 * docs/federation.md tells a platform engineer to try it. The script runs here as npm runs it,
 * with the gateway's entry from source instead of the build.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  type ManagedProcess,
  spawnNode,
  waitForHttp,
} from '../../bench/lib/processes.js';
import { subscribeSse } from '../helpers/subscriptions.js';

describe('npm run supergraph', () => {
  let script: ManagedProcess;
  let gatewayPort: number;
  const lines: string[] = [];

  beforeAll(async () => {
    gatewayPort = await freePort();
    const port = await freePort();
    script = spawnNode({
      name: 'supergraph',
      script: 'scripts/supergraph.ts',
      nodeFlags: ['--import', 'tsx'],
      args: ['dist/main.js'],
      port,
      env: { PORT: String(gatewayPort), SUPERGRAPH_PORT: String(port), LOG_LEVEL: 'warn' },
      onLine: (line) => lines.push(line),
    });
    await waitForHttp(script, '/graphql?query=%7B__typename%7D');
  }, 90_000);
  afterAll(() => script?.stop());

  it('answers queries and subscriptions of the gateway through Hive Gateway, and stops both on SIGTERM', async () => {
    expect(lines).toContain(
      `supergraph: Hive Gateway at ${script.origin}/graphql, in front of the gateway at http://127.0.0.1:${gatewayPort}/graphql`,
    );
    const response = await fetch(`${script.origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ statusPages { slug } supportedChains { id } }' }),
    });
    const { data, errors } = (await response.json()) as {
      data?: { statusPages: { slug: string }[]; supportedChains: { id: string }[] };
      errors?: unknown;
    };
    expect(errors).toBeUndefined();
    // The pages and chains `npm start` simulates.
    expect(data?.statusPages.map((page) => page.slug)).toEqual(['ledger', 'cloud', 'ai-vendor']);
    expect(data?.supportedChains.map((chain) => chain.id)).toEqual(
      expect.arrayContaining(['295', '296']),
    );

    const changes = await subscribeSse<{ statusPageChanged: { name: string } }>(
      script.origin,
      'subscription { statusPageChanged(slugs: ["cloud"]) { name } }',
    );
    expect((await changes.next())?.data?.statusPageChanged.name).toBe('A cloud vendor');
    await changes.close();

    await script.stop(20_000);
    expect(await script.exited).toBe('0');
    // The gateway it started is gone too: nothing answers on its port.
    await expect(fetch(`http://127.0.0.1:${gatewayPort}/health`)).rejects.toThrow();
  });
});
