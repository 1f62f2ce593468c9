import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InProcessGateway, startInProcess } from './helpers/in-process.js';

/** What the endpoint refuses it refuses before anything runs: the listener alone, in process. */
describe('the GraphQL endpoint', () => {
  let gateway: InProcessGateway;
  beforeAll(() => {
    gateway = startInProcess();
  });
  afterAll(() => gateway.close());

  const post = (body: string, accept = 'application/graphql-response+json') =>
    gateway.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body,
    });
  /** POSTs an operation as a client that takes plain JSON does, and parses the answer. */
  const execute = async (query: string, variables?: Record<string, unknown>) => {
    const { status, text } = await post(JSON.stringify({ query, variables }), 'application/json');
    return {
      status,
      body: JSON.parse(text) as { data?: unknown; errors?: { message: string }[] },
    };
  };

  it('serves GraphiQL to browsers, opening with the page tree query', async () => {
    const response = await gateway.request('/graphql', {
      headers: { accept: 'text/html' },
    });
    expect(response.status).toBe(200);
    expect(response.text).toContain('GraphiQL');
    expect(response.text).toContain('query PageTree');
  });

  it('answers a syntax error with 400 and where it is', async () => {
    const response = await post(JSON.stringify({ query: '{ statusPage { name ' }));
    expect(response.status).toBe(400);
    const body = JSON.parse(response.text) as {
      errors: { message: string; locations: unknown[] }[];
    };
    expect(body.errors[0]?.message).toMatch(/^Syntax Error/);
    expect(body.errors[0]?.locations).toHaveLength(1);
  });

  it('answers an unknown field with a validation error that names it', async () => {
    const { body } = await execute('{ statusPage { nmae } }');
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.message).toContain('Cannot query field "nmae" on type "Page"');
    const strict = await post(JSON.stringify({ query: '{ statusPage { nmae } }' }));
    expect(strict.status).toBe(400);
  });

  it('answers a variable of the wrong type with 400 and a clear error', async () => {
    const { status, body } = await execute(
      'query ($s: [ComponentStatus!]) { statusPage { components(status: $s) { id } } }',
      { s: ['BROKEN'] },
    );
    expect(status).toBe(400);
    expect(body.errors?.[0]?.message).toMatch(/Variable "\$s" got invalid value "BROKEN"/);
  });

  it('answers a missing required argument with a validation error', async () => {
    const { body } = await execute('{ component { id } }');
    expect(body.errors?.[0]?.message).toContain('argument "id" of type "ID!" is required');
  });

  it('answers malformed JSON with 400', async () => {
    const response = await post('{"query": ');
    expect(response.status).toBe(400);
  });

  it('answers a body without a query with 400', async () => {
    const response = await post(JSON.stringify({ variables: {} }));
    expect(response.status).toBe(400);
    const body = JSON.parse(response.text) as { errors: { message: string }[] };
    expect(body.errors[0]?.message).toMatch(/query/i);
  });

  it('still answers after all of that', async () => {
    const { status, body } = await execute('{ __typename }');
    expect(status).toBe(200);
    expect(body).toEqual({ data: { __typename: 'Query' } });
  });
});
