import { getHeapStatistics } from 'node:v8';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureContract } from '../../simulator/src/verification/fixture.js';
import { jsonHeapBound } from '../../src/json-budget.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { openRawSocket } from '../helpers/raw-socket.js';
import { closeOf, initialise, openedSocket } from '../helpers/subscriptions.js';
import { largeStdJsonInput, sourceInput } from '../helpers/verification-inputs.js';

/*
 * Finding (issue 36): an 8 MiB `verifyContractFromSource` body whose `stdJsonInput` was
 * `[{},{},…]` (2.8 million objects) took the heap to 230 of 256 MiB, and two at once ended the
 * process: the body was parsed whole before any limit. Now a client's JSON is counted before it is
 * parsed (`MAX_JSON_VALUES`, `MAX_JSON_DEPTH`) on every transport, a large upload takes the
 * client's allowance and its share of the heap before its body is read, and the heap the uploads
 * take is measured by `npm run bench:uploads`, not here.
 */

const MiB = 1_048_576;
/** `MAX_JSON_VALUES` and `MAX_JSON_DEPTH` as they ship. */
const JSON_BUDGET = { maxValues: 100_000, maxDepth: 64 };
const GREETER = fixtureContract('Greeter');
const DAI = fixtureContract('Dai');
const FROM_SOURCE = `mutation ($input: VerifyFromSourceInput!) {
  verifyContractFromSource(input: $input) { __typename ... on RateLimitedError { message } }
}`;

type Answer = {
  data?: { verifyContractFromSource?: { __typename: string } };
  errors?: { message: string; extensions: { code: string; limit?: string } }[];
};

/** A verification body whose `stdJsonInput` is `stdJsonInput`, as text. */
const bodyWith = (stdJsonInput: string, contract = GREETER) => {
  const [head, tail] = JSON.stringify({
    query: FROM_SOURCE,
    variables: { input: sourceInput(contract, { stdJsonInput: 'INPUT' }) },
  }).split('"INPUT"') as [string, string];
  return `${head}${stdJsonInput}${tail}`;
};
/** `[{},{},…]` of `bytes`: the bomb. */
const objects = (bytes: number) => `[${'{},'.repeat(Math.floor(bytes / 3) - 1)}{}]`;

describe('request bodies counted before they are parsed', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ logLevel: 'silent' });
  });
  afterAll(() => harness.close());
  beforeEach(() => {
    harness.simulator.verification.reset();
    harness.simulator.resetRequests();
  });

  const post = async (body: string) => {
    const response = await harness.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
    });
    return { status: response.status, body: (await response.json()) as Answer };
  };

  it('refuses an 8 MiB body of objects with 413 JSON_TOO_COMPLEX, and answers others meanwhile', async () => {
    const bomb = bodyWith(objects(8 * MiB - 2_000));
    const [refused, other] = await Promise.all([
      post(bomb),
      harness.execute<{ statusPage: { name: string } }>('{ statusPage { name } }'),
    ]);
    expect(refused.status).toBe(413);
    expect(refused.body.errors?.[0]?.extensions).toEqual({
      code: 'JSON_TOO_COMPLEX',
      limit: 'MAX_JSON_VALUES',
    });
    expect(refused.body.errors?.[0]?.message).toContain('more than 100000 JSON values');
    expect(other.body.data?.statusPage.name).toBeTruthy();
    expect(harness.simulator.requests.filter((request) => request.method === 'POST')).toEqual([]);
  });

  it('refuses a small body nested past MAX_JSON_DEPTH the same way', async () => {
    const deep = bodyWith(`${'['.repeat(100)}${']'.repeat(100)}`);
    const refused = await post(deep);
    expect(refused.status).toBe(413);
    expect(refused.body.errors?.[0]?.extensions).toEqual({
      code: 'JSON_TOO_COMPLEX',
      limit: 'MAX_JSON_DEPTH',
    });
  });

  it('refuses four 8 MiB uploads of objects at once, and stays up', async () => {
    const bombs = [GREETER, DAI, GREETER, DAI].map((contract) =>
      bodyWith(objects(8 * MiB - 2_000), contract),
    );
    const answers = await Promise.all(bombs.map(post));
    const codes = answers.map(
      ({ status, body }) => `${status} ${body.errors?.[0]?.extensions.code}`,
    );
    expect(codes).toContain('413 JSON_TOO_COMPLEX');
    expect(
      codes.filter((code) => code !== '413 JSON_TOO_COMPLEX' && code !== '503 TOO_MANY_UPLOADS'),
    ).toEqual([]);
    expect((await harness.fetch('/health')).status).toBe(200);
    expect((await harness.execute('{ statusPage { name } }')).status).toBe(200);
  });

  it('still verifies a real standard JSON input of 8 MiB: hundreds of sources, few values', async () => {
    const input = largeStdJsonInput(8 * MiB - 40_000);
    const answer = await post(
      JSON.stringify({
        query: FROM_SOURCE,
        variables: { input: sourceInput(GREETER, { stdJsonInput: input }) },
      }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body.data?.verifyContractFromSource?.__typename).toBe('VerificationResult');
    expect(harness.simulator.verification.received[0]?.bytes).toBeGreaterThan(8 * MiB - 40_000);
  });
});

/**
 * A gateway with a JSON budget of 1,000 values 16 deep, which the 8 MiB bodies above would be
 * refused by before their own limits, and an allowance of 2 verifications a minute, which they
 * would spend: for the tests of the budget on every transport, and of the allowance (whose upload
 * is within that budget: 84 values, 8 deep).
 */
let budgeted: Harness;
beforeAll(async () => {
  budgeted = await startHarness({
    env: {
      MAX_JSON_VALUES: 1_000,
      MAX_JSON_DEPTH: 16,
      VERIFY_RATE_LIMIT: 2,
      VERIFY_RATE_WINDOW_MS: 60_000,
    },
    logLevel: 'silent',
  });
});
afterAll(() => budgeted.close());

describe('the same budget on every transport', () => {
  const QUERY = 'query ($v: [String]) { statusPage { name } }';
  /** 1,200 objects, 3.6 KB (a URL's worth): over the budget of 1,000 values. */
  const variables = `{"v":${objects(3_600)}}`;

  it('over HTTP POST, as a request body', async () => {
    const response = await budgeted.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"query":${JSON.stringify(QUERY)},"variables":${variables}}`,
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as Answer).errors?.[0]?.extensions).toEqual({
      code: 'JSON_TOO_COMPLEX',
      limit: 'MAX_JSON_VALUES',
    });
  });

  it('over HTTP GET, as the variables parameter', async () => {
    const search = new URLSearchParams({ query: QUERY, variables });
    const response = await budgeted.fetch(`/graphql?${search}`, {
      headers: { accept: 'application/json' },
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as Answer).errors?.[0]?.extensions).toEqual({
      code: 'JSON_TOO_COMPLEX',
      limit: 'MAX_JSON_VALUES',
    });
  });

  it('over a WebSocket, as a message: its socket is closed with 4400 and the code', async () => {
    const socket = await openedSocket(budgeted.origin);
    const closed = closeOf(socket);
    expect((await initialise(socket)).acked).toBe(true);
    socket.send(
      `{"id":"1","type":"subscribe","payload":{"query":${JSON.stringify(QUERY)},"variables":${variables}}}`,
    );
    expect(await closed).toEqual({
      code: 4400,
      reason: 'JSON_TOO_COMPLEX: It holds more than 1000 JSON values (MAX_JSON_VALUES).',
    });
  });
});

describe('large uploads, before their body is read', () => {
  /** A raw POST of a large body declared by its Content-Length, of which `sent` is sent. */
  async function startUpload(origin: string, declared: number, sent: string) {
    const raw = await openRawSocket(origin);
    raw.socket.write(
      'POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${declared}\r\n\r\n${sent}`,
    );
    return raw;
  }

  it('take the allowance once: past it, one is refused 429 RATE_LIMITED without its body', async () => {
    const harness = budgeted;
    harness.simulator.verification.reset();
    // The upload takes one verification before its body is read, and its resolver none.
    const upload = JSON.stringify({
      query: FROM_SOURCE,
      variables: { input: sourceInput(GREETER, { stdJsonInput: largeStdJsonInput(400_000) }) },
    });
    const first = await harness.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: upload,
    });
    expect(((await first.json()) as Answer).data?.verifyContractFromSource?.__typename).toBe(
      'VerificationResult',
    );
    const second = await harness.execute<{ verifyContractFromSource: { __typename: string } }>(
      FROM_SOURCE,
      { input: sourceInput(DAI) },
    );
    expect(second.body.data?.verifyContractFromSource.__typename).not.toBe('RateLimitedError');

    // The allowance is spent: 429 at once, with 100 bytes of 8 MiB sent.
    const raw = await startUpload(harness.origin, 8 * MiB, upload.slice(0, 100));
    const answer = await eventually(
      () => raw.received().includes('"RATE_LIMITED"') && raw.received(),
    );
    raw.socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 429 /);
    expect(answer).toMatch(/\r\nretry-after: \d+\r\n/i);
    expect(harness.simulator.verification.received).toHaveLength(2);
  });

  it('are admitted while the heap their declared bytes count fits REQUEST_BODIES_HEAP_SHARE', async () => {
    const held = 2 * MiB;
    // Room for the upload held below and a small one (over MAX_BODY_BYTES, 256 KiB, and under
    // 400,000 bytes), not for a second of its size.
    const room = jsonHeapBound(held, JSON_BUDGET) + jsonHeapBound(400_000, JSON_BUDGET);
    const harness = await startHarness({
      env: {
        REQUEST_BODIES_HEAP_SHARE: (room / getHeapStatistics().heap_size_limit).toFixed(8),
        VERIFY_MAX_CONCURRENT_UPLOADS: 10,
      },
      logLevel: 'silent',
    });
    try {
      // Admitted once the gateway has read its headers: until then, one of its size still fits.
      const raw = await startUpload(harness.origin, held, '{"query":');
      const upload = (bytes: number) =>
        harness.fetch('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            query: FROM_SOURCE,
            variables: { input: sourceInput(DAI, { stdJsonInput: largeStdJsonInput(bytes) }) },
          }),
        });
      const refused = await eventually(async () => {
        const response = await upload(held - 100_000);
        return response.status === 503 && response;
      });
      expect(((await refused.json()) as Answer).errors?.[0]?.extensions).toEqual({
        code: 'TOO_MANY_UPLOADS',
        limit: 'REQUEST_BODIES_HEAP_SHARE',
      });
      expect(refused.headers.get('retry-after')).toBe('1');
      const small = await upload(280_000);
      expect(small.status).toBe(200);
      raw.socket.destroy();
      // Given back when its client goes: one of its size fits again.
      await eventually(async () => (await upload(held - 100_000)).status === 200);
    } finally {
      await harness.close();
    }
  });

  it('every body, small ones too, within REQUEST_BODIES_HEAP_SHARE: past it, 503 SERVER_BUSY unread', async () => {
    const held = 200_000;
    // Room for the body held below and nothing as large besides.
    const room = jsonHeapBound(held, JSON_BUDGET) + jsonHeapBound(50_000, JSON_BUDGET);
    const harness = await startHarness({
      env: { REQUEST_BODIES_HEAP_SHARE: (room / getHeapStatistics().heap_size_limit).toFixed(8) },
      logLevel: 'silent',
    });
    try {
      const raw = await startUpload(harness.origin, held, '{"query":');
      const query = (padding: number) =>
        harness.fetch('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: `{ statusPage { name } } # ${'x'.repeat(padding)}` }),
        });
      const refused = await eventually(async () => {
        const response = await query(100_000);
        return response.status === 503 && response;
      });
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(((await refused.json()) as Answer).errors?.[0]?.extensions).toEqual({
        code: 'SERVER_BUSY',
        limit: 'REQUEST_BODIES_HEAP_SHARE',
      });
      // A small body still fits, and a GET has none to count.
      expect((await query(10)).status).toBe(200);
      expect((await harness.fetch('/graphql?query=%7B__typename%7D')).status).toBe(200);
      raw.socket.destroy();
      await eventually(async () => (await query(100_000)).status === 200);
    } finally {
      await harness.close();
    }
  });
});
