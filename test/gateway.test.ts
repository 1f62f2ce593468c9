import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './helpers/harness.js';

describe('the GraphQL endpoint', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  const post = (body: string, accept = 'application/graphql-response+json') =>
    harness.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body,
    });

  it('serves GraphiQL to browsers, opening with the page tree query', async () => {
    const response = await harness.fetch('/graphql', {
      headers: { accept: 'text/html' },
    });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('GraphiQL');
    expect(html).toContain('query PageTree');
  });

  it('answers a syntax error with 400 and where it is', async () => {
    const response = await post(JSON.stringify({ query: '{ statusPage { name ' }));
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { message: string; locations: unknown[] }[] };
    expect(body.errors[0]?.message).toMatch(/^Syntax Error/);
    expect(body.errors[0]?.locations).toHaveLength(1);
  });

  it('answers an unknown field with a validation error that names it', async () => {
    const { body } = await harness.execute('{ statusPage { nmae } }');
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.message).toContain('Cannot query field "nmae" on type "Page"');
    const strict = await post(JSON.stringify({ query: '{ statusPage { nmae } }' }));
    expect(strict.status).toBe(400);
  });

  it('answers a variable of the wrong type with 400 and a clear error', async () => {
    const { status, body } = await harness.execute(
      'query ($s: [ComponentStatus!]) { statusPage { components(status: $s) { id } } }',
      { s: ['BROKEN'] },
    );
    expect(status).toBe(400);
    expect(body.errors?.[0]?.message).toMatch(/Variable "\$s" got invalid value "BROKEN"/);
  });

  it('answers a missing required argument with a validation error', async () => {
    const { body } = await harness.execute('{ component { id } }');
    expect(body.errors?.[0]?.message).toContain('argument "id" of type "ID!" is required');
  });

  it('answers malformed JSON with 400', async () => {
    const response = await post('{"query": ');
    expect(response.status).toBe(400);
  });

  it('answers a body without a query with 400', async () => {
    const response = await post(JSON.stringify({ variables: {} }));
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { message: string }[] };
    expect(body.errors[0]?.message).toMatch(/query/i);
  });

  it('still answers after all of that', async () => {
    const { body } = await harness.execute<{ statusPage: { name: string } }>(
      '{ statusPage { name } }',
    );
    expect(body.data?.statusPage.name).toBeTruthy();
  });
});
