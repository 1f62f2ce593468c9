import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

const ENTITIES = 'query ($r: [_Any!]!) { _entities(representations: $r) { __typename } }';

describe('_entities representations from a client', () => {
  let harness: Harness;
  // Within the limit, the malformed ones are answered one by one.
  beforeAll(async () => {
    harness = await startHarness({ env: { MAX_ENTITY_REPRESENTATIONS: 10 } });
  });
  afterAll(() => harness.close());

  it('answers a malformed representation with an error at its index, and keeps serving', async () => {
    const componentId = harness.simulator.statusFeed.summary.components[0]?.id;
    // The red team's request: a Contract without its address, and a type that is no entity.
    const { status, body } = await harness.execute(ENTITIES, {
      r: [
        { __typename: 'Contract', chainId: '1' },
        { __typename: 'X' },
        { __typename: 'Component', id: componentId },
        'not an object',
        { __typename: 'Component', id: 7 },
      ],
    });
    expect(status).toBe(200);
    expect(body.data).toEqual({
      _entities: [null, null, { __typename: 'Component' }, null, null],
    });
    expect(body.errors?.map((error) => [error.path, error.message])).toEqual([
      [
        ['_entities', 0],
        'Representation 0 (Contract) needs its key field "address" as a non-empty string.',
      ],
      [
        ['_entities', 1],
        'Representation 1 does not name an entity of this subgraph in __typename.',
      ],
      [['_entities', 3], 'Representation 3 is not an object.'],
      [
        ['_entities', 4],
        'Representation 4 (Component) needs its key field "id" as a non-empty string.',
      ],
    ]);
    expect(body.errors?.every((error) => error.extensions?.code === 'BAD_USER_INPUT')).toBe(true);
    expect((await harness.fetch('/health')).status).toBe(200);
  });

  it('refuses more than MAX_ENTITY_REPRESENTATIONS before asking any upstream', async () => {
    harness.simulator.resetRequests();
    const representations = Array.from({ length: 11 }, (_, i) => ({
      __typename: 'Contract',
      chainId: '1',
      address: `0x${String(i).padStart(40, '0')}`,
    }));
    const { body } = await harness.execute(ENTITIES, { r: representations });
    expect(body.data).toBeNull();
    expect(body.errors?.[0]?.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      limit: 'MAX_ENTITY_REPRESENTATIONS',
    });
    expect(harness.simulator.requestCount()).toBe(0);
  });
});
