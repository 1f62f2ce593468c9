import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { PAGE_TREE_QUERY } from '../../src/http/page-tree-query.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { startInProcess } from '../helpers/in-process.js';
import { subscribeSse } from '../helpers/subscriptions.js';
import { sourceInput } from '../helpers/verification-inputs.js';

/** A gateway at its defaults, for the tests that need no configuration of their own. */
let harness: Harness;
beforeAll(async () => {
  harness = await startHarness();
});
afterAll(() => harness.close());

describe('query limits at their defaults', () => {
  it('let the page tree and every example query of the README and the API guide through', async () => {
    const docs = await Promise.all(
      ['../../README.md', '../../docs/api.md'].map((path) =>
        readFile(new URL(path, import.meta.url), 'utf8'),
      ),
    );
    const examples = [...docs.join('\n').matchAll(/```graphql\n([\s\S]*?)```/g)]
      .map((match) => match[1] ?? '')
      // Schema snippets (another team's SDL) are not operations.
      .filter((block) => !/^(\s*#.*\n)*\s*(type|extend|schema)\b/.test(block));
    expect(examples.length).toBeGreaterThan(4);
    const componentId = harness.simulator.statusFeed.summary.components[0]?.id;
    const [contract] = VERIFIABLE_CONTRACTS;
    const variables = {
      id: componentId,
      network: harness.simulator.statusFeed.summary.components.find((c) => c.group)?.id,
      input: { address: contract?.address, chainId: contract?.chainId },
      addresses: [contract?.address],
      source: sourceInput(),
    };
    for (const example of [PAGE_TREE_QUERY, ...examples]) {
      if (/^\s*subscription\b/.test(example)) {
        // Whatever the subscription sends first (the page, or nothing until a change) has no error.
        const events = await subscribeSse(harness.origin, example, variables);
        const first = await events.next(300).catch(() => undefined);
        expect({ example, errors: first?.errors }).toEqual({ example, errors: undefined });
        await events.close();
        continue;
      }
      const { body } = await harness.execute(example, variables);
      expect({ example, errors: body.errors }).toEqual({ example, errors: undefined });
    }
  });
});

describe('introspection and GraphiQL switched off, as in production', () => {
  it('refuses introspection and gives no field suggestions', async () => {
    // What the schema refuses before it runs and the page the listener serves: no upstream in it.
    const production = startInProcess({ env: { INTROSPECTION: false, GRAPHIQL: false } });
    const introspection = await production.execute('{ __schema { types { name } } }');
    expect(introspection.body.errors?.[0]?.message).toMatch(/introspection/i);
    const typo = await production.execute('{ statusPag { name } }');
    expect(typo.body.errors?.[0]?.message).toContain('Cannot query field "statusPag"');
    expect(typo.body.errors?.[0]?.message).not.toMatch(/Did you mean/);
    const page = await production.request('/graphql', {
      headers: { accept: 'text/html' },
    });
    // A short page saying what the endpoint is, not GraphiQL and not an empty 406.
    expect(page.status).toBe(406);
    expect(page.text).toContain('GraphiQL is turned off in this deployment');
    expect(page.text).not.toContain('<script');
    const federation = await production.execute('{ _service { sdl } }');
    expect(federation.body.data).toEqual({
      _service: { sdl: expect.stringContaining('type Page') },
    });
    await production.close();
  });

  it('suggests fields while introspection is on', async () => {
    const typo = await harness.execute('{ statusPag { name } }');
    expect(typo.body.errors?.[0]?.message).toMatch(/Did you mean "statusPage"/);
  });
});
