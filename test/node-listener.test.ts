import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PAGE_TREE_QUERY } from '../src/page-tree-query.js';
import { type Harness, type HarnessOptions, startHarness } from './gateway-harness.js';

const SUMMARY = '/status/api/v2/summary.json';

describe('the response cache in front of Yoga', () => {
  let harness: Harness;
  let server: Server;
  let url: string;

  async function start(options: HarnessOptions = {}) {
    harness = await startHarness(options);
    server = createServer(harness.gateway.listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  }
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await harness.close();
  });

  async function post(query: string, headers: Record<string, string> = {}) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query }),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }
  const metric = async (series: string) => {
    const text = await (await fetch(url.replace('/graphql', '/metrics'))).text();
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  };

  it('answers a repeated status query from memory, byte for byte, and counts it', async () => {
    await start();
    const first = await post(PAGE_TREE_QUERY, { 'x-request-id': 'first' });
    const second = await post(PAGE_TREE_QUERY, { 'x-request-id': 'second' });
    expect(second.text).toBe(first.text);
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(second.headers.get('x-request-id')).toBe('second');
    expect(await metric('response_cache_reads_total{result="stored"}')).toBe(1);
    expect(await metric('response_cache_reads_total{result="hit"}')).toBe(1);
    expect(
      await metric(
        'graphql_operation_duration_seconds_count{operation="PageTree",type="query",outcome="ok"}',
      ),
    ).toBe(2);
    expect(harness.simulator.requestCount(SUMMARY)).toBe(1);
    const hit = harness.logs.find((line) => line.msg === 'request' && line.cache === 'hit');
    expect(hit).toMatchObject({ requestId: 'second', status: 200, operation: 'PageTree' });
  });

  it('rebuilds the answer once the snapshot it came from is refetched', async () => {
    await start({ statusCacheTtlMs: 100 });
    const first = await post('{ statusPage { fetchedAt } }');
    await new Promise((resolve) => setTimeout(resolve, 150));
    const second = await post('{ statusPage { fetchedAt } }');
    expect(second.text).not.toBe(first.text);
    expect(harness.simulator.requestCount(SUMMARY)).toBe(2);
    expect(await metric('response_cache_reads_total{result="hit"}')).toBe(0);
  });

  it('keeps answers apart by Accept header', async () => {
    await start();
    await post('{ statusPage { name } }');
    const strict = await post('{ statusPage { name } }', {
      accept: 'application/graphql-response+json',
    });
    expect(strict.headers.get('content-type')).toContain('application/graphql-response+json');
    const again = await post('{ statusPage { name } }', {
      accept: 'application/graphql-response+json',
    });
    expect(again.headers.get('content-type')).toContain('application/graphql-response+json');
  });

  it('never keeps mutations, answers that read the verification service, or answers with errors', async () => {
    await start();
    const mutation = `mutation { verifyContract(input: { address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", chainId: "1" }) { __typename } }`;
    await post(mutation);
    const again = await post(mutation);
    expect(again.text).toContain('VerificationResult');
    expect(harness.simulator.requestCount('/verify/session/verify/etherscan')).toBe(2);

    await post('{ supportedChains { id } statusPage { name } }');
    await post('{ statusPage { nope } }');
    await post('{ statusPage { nope } }');
    expect(await metric('response_cache_reads_total{result="hit"}')).toBe(0);
    expect(await metric('response_cache_reads_total{result="stored"}')).toBe(0);
  });

  it('does not keep the last good snapshot served while the feed is down', async () => {
    await start({ statusCacheTtlMs: 0, upstreamRetries: 0 });
    await post('{ statusPage { stale } }');
    harness.simulator.setFault('status', '*', { kind: 'status', status: 503 });
    const first = await post('{ statusPage { stale } }');
    const second = await post('{ statusPage { stale } }');
    expect(JSON.parse(first.text)).toEqual({ data: { statusPage: { stale: true } } });
    expect(JSON.parse(second.text)).toEqual({ data: { statusPage: { stale: true } } });
    expect(await metric('response_cache_reads_total{result="hit"}')).toBe(0);
  });

  it('answers a Host header that is not a host with 400, never a stack trace', async () => {
    await start();
    const send = (method: string, path: string, body?: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const request = httpRequest(
          {
            host: '127.0.0.1',
            port: Number(new URL(url).port),
            method,
            path,
            headers: {
              host: 'not a valid host[',
              ...(body
                ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
                : {}),
            },
          },
          (response) => {
            let text = '';
            response.on('data', (chunk) => {
              text += String(chunk);
            });
            response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    for (const answer of [
      await send('POST', '/graphql', JSON.stringify({ query: '{ statusPage { name } }' })),
      await send('GET', '/graphql?query=%7B__typename%7D'),
      await send('GET', '/health'),
    ]) {
      expect(answer.status).toBe(400);
      expect(answer.text).not.toMatch(/TypeError|at new URL/);
    }
  });

  it('still refuses a cross-site form post and an oversized body', async () => {
    await start({ maxBodyBytes: 1_000 });
    const form = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ query: '{ statusPage { name } }' }),
    });
    expect(form.status).toBe(400);
    const big = await post(`{ statusPage { name } } # ${'x'.repeat(2_000)}`);
    expect(big.status).toBe(413);
  });
});
