import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { startInProcess } from '../helpers/in-process.js';

const MUTATION = `mutation { verifyContract(input: { address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", chainId: "1" }) { __typename } }`;

/** A gateway at its defaults, for the tests that need no configuration of their own. */
let harness: Harness;
beforeAll(async () => {
  harness = await startHarness();
});
afterAll(() => harness.close());

describe('cross-site request forgery', () => {
  const post = (body: BodyInit, headers: Record<string, string>) =>
    harness.fetch('/graphql', { method: 'POST', body, headers });

  it.each([
    ['text/plain', 'text/plain;charset=UTF-8', JSON.stringify({ query: MUTATION })],
    ['a form post', 'application/x-www-form-urlencoded', `query=${encodeURIComponent(MUTATION)}`],
    [
      'multipart',
      'multipart/form-data; boundary=x',
      `--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n${MUTATION}\r\n--x--`,
    ],
  ])('blocks %s before it runs anything', async (_name, contentType, body) => {
    harness.simulator.resetRequests();
    const response = await post(body, { 'content-type': contentType, cookie: 'verify_session=x' });
    expect(response.status).toBe(400);
    const json = (await response.json()) as {
      errors: { message: string; extensions: { code: string } }[];
    };
    expect(json.errors[0]?.extensions.code).toBe('CSRF_BLOCKED');
    expect(json.errors[0]?.message).toContain('Content-Type: application/json');
    expect(harness.simulator.requestCount()).toBe(0);
  });

  it("blocks a cross-site upload before it takes the client's verification allowance", async () => {
    // No upstream: what matters is whether the allowance of one was spent on the blocked upload.
    const gateway = startInProcess({ env: { VERIFY_RATE_LIMIT: '1' } });
    try {
      const upload = await gateway.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        // Over MAX_BODY_BYTES: as large as only a source verification may send.
        body: JSON.stringify({ query: MUTATION, pad: 'x'.repeat(300_000) }),
      });
      expect(upload.status).toBe(400);
      expect(JSON.parse(upload.text)).toMatchObject({
        errors: [{ extensions: { code: 'CSRF_BLOCKED' } }],
      });
      const verify = async () => {
        const response = await gateway.request('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: MUTATION }),
        });
        return (JSON.parse(response.text) as { data: { verifyContract: { __typename: string } } })
          .data.verifyContract.__typename;
      };
      // The allowance is whole: the first verification is tried, the second refused.
      expect(await verify()).toBe('UpstreamUnavailableError');
      expect(await verify()).toBe('RateLimitedError');
    } finally {
      await gateway.close();
    }
  });

  it('blocks a POST without a content type', async () => {
    const response = await harness.fetch('/graphql', {
      method: 'POST',
      body: new Blob([JSON.stringify({ query: '{ __typename }' })]),
    });
    expect(response.status).toBe(400);
  });

  it('lets ordinary JSON POSTs through without extra headers', async () => {
    const response = await post(JSON.stringify({ query: MUTATION }), {
      'content-type': 'application/json',
    });
    expect(response.status).toBe(200);
    const json = (await response.json()) as { data: { verifyContract: { __typename: string } } };
    expect(json.data.verifyContract.__typename).toBe('VerificationResult');
  });

  it('runs queries over GET, and never mutations', async () => {
    const query = await harness.fetch(
      `/graphql?query=${encodeURIComponent('{ statusPage { name } }')}`,
    );
    expect(query.status).toBe(200);
    const mutation = await harness.fetch(`/graphql?query=${encodeURIComponent(MUTATION)}`, {
      headers: { accept: 'application/json' },
    });
    expect(mutation.status).toBe(405);
  });
});

describe('CORS', () => {
  it('is same-origin only unless origins are configured', async () => {
    const response = await harness.fetch('/graphql', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  // Preflights are the listener's alone: each configuration a gateway in process, no upstream.
  it('allows the configured origins, with credentials, and no others', async () => {
    const gateway = startInProcess({ env: { CORS_ORIGINS: 'https://app.example.com' } });
    const preflight = (origin: string) =>
      gateway.request('/graphql', {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers':
            'content-type, authorization, traceparent, apollographql-client-name',
        },
      });
    const allowed = await preflight('https://app.example.com');
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    const headers = allowed.headers.get('access-control-allow-headers')?.split(/,\s*/) ?? [];
    expect(headers).toEqual(
      expect.arrayContaining(['authorization', 'traceparent', 'apollographql-client-name']),
    );
    const denied = await preflight('https://evil.example');
    expect(denied.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
    await gateway.close();
  });

  it('allows exactly the request headers CORS_ALLOWED_HEADERS lists', async () => {
    const gateway = startInProcess({
      env: {
        CORS_ORIGINS: 'https://app.example.com',
        CORS_ALLOWED_HEADERS: 'content-type,x-tenant',
      },
    });
    const allowed = await gateway.request('/graphql', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-tenant, traceparent',
      },
    });
    expect(allowed.headers.get('access-control-allow-headers')?.split(/,\s*/)).toEqual([
      'content-type',
      'x-tenant',
    ]);
    await gateway.close();
  });
});
