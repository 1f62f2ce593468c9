import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InProcessGateway, startInProcess } from '../helpers/in-process.js';

/** What the limits and coercion refuse is refused before anything runs: the listener alone. */
let gateway: InProcessGateway;
beforeAll(() => {
  gateway = startInProcess({
    env: {
      MAX_TOKENS: 60,
      MAX_COST: 20,
      MAX_DEPTH: 3,
      MAX_ALIASES: 1,
      MAX_DIRECTIVES: 1,
      INTROSPECTION: false,
    },
  });
});
afterAll(() => gateway.close());

/** POSTs an operation and parses its answer. */
async function execute(query: string, variables?: Record<string, unknown>) {
  const { text } = await gateway.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return { body: JSON.parse(text) as { errors?: { message: string }[] } };
}

describe('limit errors say which limit, with a code', () => {
  it.each([
    [
      'MAX_ALIASES',
      '{ a: statusPage { name } b: statusPage { name } }',
      'Aliases limit of 1 exceeded, found 2.',
    ],
    // graphql-armor leaves `__typename` out by default: each alias is an answer key all the same.
    ['MAX_ALIASES', '{ a: __typename b: __typename }', 'Aliases limit of 1 exceeded, found 2.'],
    [
      'MAX_DEPTH',
      '{ statusPage { components { group { name } } } }',
      'Query depth limit of 3 exceeded, found 4.',
    ],
    [
      'MAX_DIRECTIVES',
      '{ statusPage { name @include(if: true) url @include(if: true) } }',
      'Directives limit of 1 exceeded, found 2.',
    ],
    [
      'MAX_COST',
      '{ statusPage { name url updatedAt fetchedAt stale id status { indicator } components { id } } }',
      'Query Cost limit of 20 exceeded, found 21.5.',
    ],
    ['MAX_TOKENS', `{ statusPage { ${'name '.repeat(60)} } }`, 'Token limit of 60 exceeded.'],
  ])('%s', async (limit, query, message) => {
    const { body } = await execute(query);
    expect(body.errors).toEqual([
      expect.objectContaining({ message, extensions: { code: 'BAD_USER_INPUT', limit } }),
    ]);
  });

  it('rounds the cost it found up: a whole number from 100', async () => {
    // (2 + 1.5 × (2 + 1.5 × 1)) × 17 = 123.25: pages, edges, cursor, times `first`.
    const { body } = await execute('{ pages(first: 17) { edges { cursor } } }');
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: 'Query Cost limit of 20 exceeded, found 124.',
        extensions: { code: 'BAD_USER_INPUT', limit: 'MAX_COST' },
      }),
    ]);
  });
});

describe('with introspection off', () => {
  it('names no enum value or input field in coercion errors', async () => {
    // Within the limits above: the error is the coercion's.
    const { body } = await execute(
      'query ($s: [ComponentStatus!]) { statusPage { components(status: $s) { id } } }',
      { s: ['OPERATIONL'] },
    );
    expect(body.errors?.[0]?.message).toBe(
      'Variable "$s" got invalid value "OPERATIONL" at "s[0]"; Value "OPERATIONL" does not exist in "ComponentStatus" enum.',
    );
  });
});
