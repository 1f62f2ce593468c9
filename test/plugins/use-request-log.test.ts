import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('request ids and the request log', () => {
  let harness: Harness;
  afterEach(() => harness.close());

  it('logs one line per request, echoes the id and sends it upstream', async () => {
    harness = await startHarness({ logLevel: 'info' });
    const { headers } = await harness.execute('query Banner { statusPage { name } }', undefined, {
      headers: { 'x-request-id': 'req-123' },
    });
    expect(headers.get('x-request-id')).toBe('req-123');
    expect(harness.simulator.requests.at(-1)?.headers['x-request-id']).toBe('req-123');
    const lines = harness.logs.filter((line) => line.msg === 'request');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      requestId: 'req-123',
      method: 'POST',
      path: '/graphql',
      status: 200,
      operation: 'Banner',
    });
  });

  it('makes up an id when the caller sends none or an unsafe one', async () => {
    harness = await startHarness();
    const first = await harness.execute('{ __typename }');
    const second = await harness.execute('{ __typename }', undefined, {
      headers: { 'x-request-id': 'bad id\twith spaces' },
    });
    const uuid = /^[0-9a-f-]{36}$/;
    expect(first.headers.get('x-request-id')).toMatch(uuid);
    expect(second.headers.get('x-request-id')).toMatch(uuid);
  });

  it('never logs the query string of a GET', async () => {
    harness = await startHarness();
    await harness.fetch(
      `/graphql?query=${encodeURIComponent('{ statusPage { name } }')}&secret=s3cr3t`,
    );
    const line = harness.logs.find((candidate) => candidate.msg === 'request');
    expect(line?.path).toBe('/graphql');
    expect(JSON.stringify(harness.logs)).not.toContain('s3cr3t');
  });
});
