import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedFeed } from '../../simulator/src/status-feed/fixture.js';
import { VERIFIABLE_CONTRACTS } from '../../simulator/src/verification/fixture.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import {
  type OtlpReceiver,
  type ReceivedSpan,
  startOtlpReceiver,
} from '../helpers/otlp-receiver.js';
import { sessionEra } from '../helpers/session-era.js';
import { statusPagesFile } from '../helpers/status-pages-file.js';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

const traceparentOf = (traceId: string, parentId: string, sampled = true) =>
  `00-${traceId}-${parentId}-${sampled ? '01' : '00'}`;

/** A fresh trace id and span id, as a caller would make them. */
function callerIds(): { traceId: string; parentId: string } {
  const hex = (bytes: number) =>
    Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (byte) =>
      byte.toString(16).padStart(2, '0'),
    ).join('');
  return { traceId: hex(16), parentId: hex(8) };
}

const PAGE_BANNER = 'query Banner { statusPage { name status { indicator } } }';
const SUMMARY_PATH = '/status/api/v2/summary.json';

describe('tracing over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let harness: Harness;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    harness = await startHarness(
      sessionEra({
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_SERVICE_NAME: 'status-gateway-under-test',
          OTEL_BSP_SCHEDULE_DELAY: 20,
        },
      }),
    );
  });
  afterAll(async () => {
    await harness.close();
    await receiver.close();
  });

  const inTrace = (traceId: string) => receiver.spans.filter((span) => span.traceId === traceId);
  const named = (spans: ReceivedSpan[], name: string) => {
    const span = spans.find((candidate) => candidate.name === name);
    if (!span) throw new Error(`no span ${name} among ${spans.map((s) => s.name).join(', ')}`);
    return span;
  };

  it("continues the caller's traceparent through the operation to the upstream, which sees the same trace", async () => {
    const { traceId, parentId } = callerIds();
    const { status, headers } = await harness.execute(PAGE_BANNER, undefined, {
      headers: { traceparent: traceparentOf(traceId, parentId), 'x-request-id': 'traced-1' },
    });
    expect(status).toBe(200);
    await receiver.waitFor((spans) =>
      spans.some((span) => span.traceId === traceId && span.name === 'POST /graphql'),
    );
    const spans = inTrace(traceId);

    const request = named(spans, 'POST /graphql');
    expect(request).toMatchObject({
      kind: SERVER,
      parentSpanId: parentId,
      serviceName: 'status-gateway-under-test',
    });
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/graphql',
      'http.response.status_code': 200,
      'gateway.request_id': headers.get('x-request-id'),
    });

    const operation = named(spans, 'graphql.operation Banner');
    expect(operation.parentSpanId).toBe(request.spanId);
    expect(operation.attributes).toMatchObject({
      'graphql.operation.name': 'Banner',
      'graphql.operation.type': 'query',
    });
    for (const step of ['graphql.parse', 'graphql.validate', 'graphql.execute']) {
      expect(named(spans, step).parentSpanId).toBe(operation.spanId);
    }

    const fetch = named(spans, 'GET /summary.json');
    expect(fetch.kind).toBe(CLIENT);
    expect(fetch.parentSpanId).toBe(named(spans, 'graphql.execute').spanId);
    expect(fetch.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.response.status_code': 200,
      'gateway.upstream': 'status feed',
      'url.full': `${harness.simulator.statusBaseUrl}/summary.json`,
    });

    // The upstream was asked within the same trace, as a child of the gateway's client span.
    const upstream = harness.simulator.requests.find(
      (entry) => entry.path === SUMMARY_PATH && entry.headers['x-request-id'] === 'traced-1',
    );
    expect(upstream?.headers.traceparent).toBe(traceparentOf(traceId, fetch.spanId));
  });

  it('still draws the request span of an answer served from the response cache', async () => {
    await harness.execute(PAGE_BANNER);
    const { traceId, parentId } = callerIds();
    await harness.execute(PAGE_BANNER, undefined, {
      headers: { traceparent: traceparentOf(traceId, parentId) },
    });
    await receiver.waitFor((spans) => spans.some((span) => span.traceId === traceId));
    const [request, ...others] = inTrace(traceId);
    expect(others).toEqual([]);
    expect(request).toMatchObject({ name: 'POST /graphql', parentSpanId: parentId });
    expect(request?.attributes).toMatchObject({
      'gateway.response_cache': 'hit',
      'graphql.operation.name': 'Banner',
      'http.response.status_code': 200,
    });
  });

  it('starts a trace of its own without a traceparent, or with a malformed one', async () => {
    await harness.execute('query Fresh { statusPage { name } }', undefined, {
      headers: { traceparent: '00-not-a-trace-01', 'x-request-id': 'malformed-parent' },
    });
    await receiver.waitFor((spans) =>
      spans.some((span) => span.attributes['gateway.request_id'] === 'malformed-parent'),
    );
    const request = receiver.spans.find(
      (span) => span.attributes['gateway.request_id'] === 'malformed-parent',
    );
    expect(request?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(request?.parentSpanId).toBeUndefined();
  });

  it('records no span of a trace its caller did not sample, yet passes the decision upstream', async () => {
    const { traceId, parentId } = callerIds();
    await harness.execute('query Unsampled { supportedChains { id } }', undefined, {
      headers: {
        traceparent: traceparentOf(traceId, parentId, false),
        'x-request-id': 'unsampled',
      },
    });
    // Another, sampled request's spans arriving shows the exporter ran since.
    const marker = callerIds();
    await harness.execute('{ __typename }', undefined, {
      headers: { traceparent: traceparentOf(marker.traceId, marker.parentId) },
    });
    await receiver.waitFor((spans) => spans.some((span) => span.traceId === marker.traceId));
    expect(inTrace(traceId)).toEqual([]);
    const upstream = harness.simulator.requests.find(
      (entry) => entry.headers['x-request-id'] === 'unsampled',
    );
    expect(upstream?.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
  });

  it('marks a failed upstream call on its client span with the status, and exports no secret', async () => {
    const [contract] = VERIFIABLE_CONTRACTS;
    if (!contract) throw new Error('the simulator knows a contract');
    const apiKey = 'TRACE-SECRET-KEY-4c1e9a7b3d5f';
    harness.simulator.setFault('verify', '*', { kind: 'status', status: 503 });
    const { traceId, parentId } = callerIds();
    const { body } = await harness.execute(
      `mutation Verify($input: VerifyContractInput!) {
        verifyContract(input: $input) { __typename }
      }`,
      { input: { address: contract.address, chainId: contract.chainId, apiKey } },
      { headers: { traceparent: traceparentOf(traceId, parentId) } },
    );
    harness.simulator.clearFaults();
    expect(body.data).toEqual({ verifyContract: { __typename: 'UpstreamUnavailableError' } });
    await receiver.waitFor((spans) =>
      spans.some((span) => span.traceId === traceId && span.name.startsWith('POST /session')),
    );
    const spans = inTrace(traceId);
    const post = spans.find((span) => span.name.startsWith('POST /session/verify'));
    expect(post).toMatchObject({ kind: CLIENT, status: { code: ERROR } });
    expect(post?.attributes['http.response.status_code']).toBe(503);
    expect(post?.status.message).toMatch(/HTTP 503/);
    expect(receiver.bodies.join('\n')).not.toContain(apiKey);
    expect(receiver.bodies.join('\n')).not.toContain('TRACE-SECRET');
  });

  it('marks an operation that answers errors with their codes, and the step that failed', async () => {
    const { traceId, parentId } = callerIds();
    await harness.execute('query Broken { statusPage { noSuchField } }', undefined, {
      headers: { traceparent: traceparentOf(traceId, parentId) },
    });
    await receiver.waitFor((spans) =>
      spans.some((span) => span.traceId === traceId && span.name === 'POST /graphql'),
    );
    const spans = inTrace(traceId);
    const operation = spans.find((span) => span.name.startsWith('graphql.operation'));
    expect(operation).toMatchObject({ status: { code: ERROR } });
    expect(operation?.attributes['graphql.error.codes']).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(named(spans, 'graphql.validate').status.code).toBe(ERROR);
    expect(spans.some((span) => span.name === 'graphql.execute')).toBe(false);
  });

  it('puts the trace id on the log lines a traced request causes', async () => {
    const { traceId, parentId } = callerIds();
    await harness.execute('{ __typename }', undefined, {
      headers: { traceparent: traceparentOf(traceId, parentId), 'x-request-id': 'logged-trace' },
    });
    const line = harness.logs.find(
      (entry) => entry.msg === 'request' && entry.requestId === 'logged-trace',
    );
    expect(line?.traceId).toBe(traceId);
  });

  it('does not trace health probes and scrapes', async () => {
    const { traceId, parentId } = callerIds();
    const traceparent = traceparentOf(traceId, parentId);
    for (const path of ['/health', '/readiness', '/metrics']) {
      expect((await harness.fetch(path, { headers: { traceparent } })).status).toBe(200);
    }
    const marker = callerIds();
    await harness.execute('{ __typename }', undefined, {
      headers: { traceparent: traceparentOf(marker.traceId, marker.parentId) },
    });
    await receiver.waitFor((spans) => spans.some((span) => span.traceId === marker.traceId));
    expect(inTrace(traceId)).toEqual([]);
  });
});

// A gateway of its own: with no endpoint configured, it traces nothing and passes the caller's on.
describe('without an OTLP endpoint', () => {
  let harness: Harness;
  beforeAll(async () => {
    // A page for each test, which nobody read before it: its read goes upstream.
    harness = await startHarness({
      simulator: { statusPages: { untraced: createSimulatedFeed(), zeros: createSimulatedFeed() } },
      env: (simulator) => ({
        STATUS_PAGES_FILE: statusPagesFile(
          ['untraced', 'zeros'].map((slug) => ({ slug, baseUrl: simulator.statusPageUrl(slug) })),
        ),
      }),
    });
  });
  afterAll(() => harness?.close());

  /** PAGE_BANNER of page `slug`. */
  const bannerOf = (slug: string) =>
    `query Banner { statusPage(slug: "${slug}") { name status { indicator } } }`;

  it("passes the caller's traceparent and tracestate to the upstream as they came", async () => {
    const { traceId, parentId } = callerIds();
    const traceparent = traceparentOf(traceId, parentId);
    await harness.execute(bannerOf('untraced'), undefined, {
      headers: { traceparent, tracestate: 'vendor=abc', 'x-request-id': 'untraced' },
    });
    const upstream = harness.simulator.requests.find(
      (entry) => entry.headers['x-request-id'] === 'untraced',
    );
    expect(upstream?.headers.traceparent).toBe(traceparent);
    expect(upstream?.headers.tracestate).toBe('vendor=abc');
  });

  it('passes on no malformed traceparent', async () => {
    await harness.execute(bannerOf('zeros'), undefined, {
      headers: {
        traceparent: `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01`,
        'x-request-id': 'zeros',
      },
    });
    const upstream = harness.simulator.requests.find(
      (entry) => entry.headers['x-request-id'] === 'zeros',
    );
    expect(upstream).toBeDefined();
    expect(upstream?.headers.traceparent).toBeUndefined();
  });
});
