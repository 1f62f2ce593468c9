import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/errors/error-code.js';
import { PAGE_TREE_QUERY } from '../src/http/page-tree-query.js';
import { type Harness, startHarness } from './helpers/harness.js';
import { type Listening, listen } from './helpers/listen.js';

interface Answer {
  status: number;
  body: { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
}

describe('bad input', () => {
  let harness: Harness;
  let server: Listening;
  let port: number;

  beforeAll(async () => {
    // The token limit out of the way of the alias limit's test: the others are refused by the
    // limits they name (their assertions accept the token limit too).
    harness = await startHarness({ env: { MAX_TOKENS: 100_000 } });
    server = await listen(harness.gateway.listener);
    port = server.port;
  });
  afterAll(async () => {
    await server.close();
    await harness.close();
  });

  async function send(body: BodyInit, contentType = 'application/json'): Promise<Answer> {
    const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': contentType, accept: 'application/graphql-response+json' },
      body,
      duplex: 'half',
    } as RequestInit);
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Answer['body'] };
  }
  const query = (document: string, variables?: unknown) =>
    send(JSON.stringify({ query: document, variables }));

  it('answers malformed JSON with 400', async () => {
    const { status, body } = await send('{"query": "{ statusPage { name } }"');
    expect(status).toBe(400);
    expect(body.errors?.[0]?.message).toBe('The request body is not valid JSON.');
  });

  it('answers a JSON body that is not an object with 400', async () => {
    expect((await send('"{ __typename }"')).status).toBe(400);
    const batch = await send(
      JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
    );
    expect(batch.status).toBe(400);
    expect(batch.body.errors?.[0]?.message).toContain('Batched operations are not supported');
  });

  it('answers a content type it does not take with 4xx', async () => {
    const { status } = await send('<query/>', 'application/xml');
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
  });

  it('answers a 5 MB body with 413, declared or streamed', async () => {
    const big = JSON.stringify({
      query: '{ __typename }',
      variables: { pad: 'x'.repeat(5_000_000) },
    });
    const declared = await send(big);
    expect(declared.status).toBe(413);
    expect(declared.body.errors?.[0]?.extensions?.code).toBe('PAYLOAD_TOO_LARGE');

    const streamed = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(
        {
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/graphql',
          headers: { 'content-type': 'application/json' },
        },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on('error', reject);
      // No content-length: chunked, so only reading it tells its size.
      for (let i = 0; i < 50; i += 1) request.write('x'.repeat(100_000));
      request.end();
    });
    expect(streamed).toBe(413);
  });

  it('answers GET parameters that are not JSON objects with 400 naming them', async () => {
    const get = async (search: string) => {
      const response = await fetch(`http://127.0.0.1:${port}/graphql?${search}`, {
        headers: { accept: 'application/json' },
      });
      return { status: response.status, body: (await response.json()) as Answer['body'] };
    };
    const query = `query=${encodeURIComponent('query ($id: ID!) { component(id: $id) { id } }')}`;
    const notJson = await get(`${query}&variables=notjson`);
    expect(notJson.status).toBe(400);
    expect(notJson.body.errors?.[0]?.message).toBe('The "variables" parameter is not valid JSON.');
    const array = await get(`${query}&variables=%5B1%5D`);
    expect(array.status).toBe(400);
    expect(array.body.errors?.[0]?.message).toBe(
      'The "variables" parameter must be a JSON object.',
    );
    const fine = await get(`${query}&variables=${encodeURIComponent('{"id":"x"}')}`);
    expect(fine.status).toBe(200);
    expect(fine.body.data).toEqual({ component: null });
  });

  it('refuses a 200-deep query before running it', async () => {
    const deep = `{ statusPage { components { ${'children { '.repeat(200)}id${' }'.repeat(200)} } } }`;
    const { body } = await query(deep);
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.message).toMatch(/depth|token/i);
  });

  it('refuses a 40-deep children chain', async () => {
    const deep = `{ statusPage { components { ${'children { '.repeat(40)}id${' }'.repeat(40)} } } }`;
    const { body } = await query(deep);
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.message).toMatch(/depth limit/i);
  });

  it('refuses 1,000 aliases', async () => {
    const aliases = Array.from({ length: 1_000 }, (_, i) => `a${i}: statusPage { name }`).join(' ');
    const { body } = await query(`{ ${aliases} }`);
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.message).toMatch(/alias|token/i);
  });

  it('refuses 1,000 aliases when the token limit is raised out of the way', async () => {
    const aliases = Array.from({ length: 1_000 }, (_, i) => `a${i}: statusPage { name }`).join(' ');
    const { body } = await harness.execute(`{ ${aliases} }`);
    expect(body.errors?.[0]?.message).toMatch(/aliases limit/i);
  });

  it('refuses too many directives', async () => {
    const directives = Array.from({ length: 50 }, () => '@include(if: true)').join(' ');
    const { body } = await query(`{ __typename ${directives} }`);
    expect(body.errors?.[0]?.message).toMatch(/directive/i);
  });

  it('names an unknown field', async () => {
    const { body } = await query('{ statusPage { colour } }');
    expect(body.errors?.[0]?.message).toContain('Cannot query field "colour" on type "Page"');
  });

  it('names a variable of the wrong type', async () => {
    const { status, body } = await query('query ($id: ID!) { component(id: $id) { id } }', {
      id: { nested: true },
    });
    expect(status).toBe(400);
    expect(body.errors?.[0]?.message).toMatch(/Variable "\$id" got invalid value/);
  });

  it('names a missing required variable, with its code', async () => {
    const { status, body } = await query('query ($id: ID!) { component(id: $id) { id } }');
    expect(status).toBe(400);
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: 'Variable "$id" of required type "ID!" was not provided.',
        extensions: { code: 'BAD_USER_INPUT', variable: 'id' },
      }),
    ]);
  });

  it('answers each refusal of the document with a code of the table (docs/api.md)', async () => {
    const answers = await Promise.all([
      query('{ statusPage { name }'),
      query('{ statusPage { colour } }'),
      query('query ($id: ID!) { component(id: $id) { id } }', { id: [] }),
      send(JSON.stringify({ query: 'query A { __typename } query B { __typename }' })),
    ]);
    const codes = answers.map(({ body }) => body.errors?.[0]?.extensions?.code);
    expect(codes).toEqual([
      'GRAPHQL_PARSE_FAILED',
      'GRAPHQL_VALIDATION_FAILED',
      'BAD_USER_INPUT',
      'OPERATION_RESOLUTION_FAILURE',
    ]);
    expect(codes.filter((code) => !(code && code in ERROR_CODES))).toEqual([]);
  });

  it('refuses a huge address string as invalid input, sending nothing upstream', async () => {
    harness.simulator.resetRequests();
    const { body } = await query(
      'mutation ($a: String!) { verifyContract(input: { address: $a, chainId: "1" }) { __typename ... on InvalidInputError { field } } }',
      { a: `0x${'f'.repeat(200_000)}` },
    );
    expect(body.data).toEqual({
      verifyContract: { __typename: 'InvalidInputError', field: 'address' },
    });
    // Nothing to the verification service, whichever API it speaks.
    expect(harness.simulator.requests.filter(({ path }) => path.startsWith('/verify/'))).toEqual(
      [],
    );
  });

  it('keeps answering the page tree after all of that', async () => {
    const { status, body } = await query(PAGE_TREE_QUERY);
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
  });
});
