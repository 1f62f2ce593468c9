import { getHeapStatistics } from 'node:v8';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureContract } from '../../simulator/src/verification/fixture.js';
import { jsonHeapBound } from '../../src/json-budget.js';
import { eventually } from '../helpers/eventually.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { openRawSocket, type RawSocket } from '../helpers/raw-socket.js';
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
 * A gateway with a JSON budget of 1,000 values 16 deep (`BUDGET`), which the 8 MiB bodies above
 * would be refused by before their own limits; an allowance of `ALLOWANCE` verifications a minute,
 * which they would spend; and `ROOM` for request bodies. For the tests of the budget on every
 * transport, of the allowance (its client's own, behind a proxy; its upload within that budget: 84
 * values, 8 deep) and of the room (their uploads too).
 */
const BUDGET = { maxValues: 1_000, maxDepth: 16 };
/** More than the room's tests take from their client (an upload each admitted). */
const ALLOWANCE = 20;
/** The upload the room's tests hold, its body unsent. */
const HELD = 2 * MiB;
/**
 * `REQUEST_BODIES_HEAP_SHARE` in bytes: room for an upload of `HELD` and one of 400,000 bytes
 * besides (over `MAX_BODY_BYTES`, 256 KiB), not for a second of `HELD`'s size.
 */
const ROOM = jsonHeapBound(HELD, BUDGET) + jsonHeapBound(400_000, BUDGET);
let budgeted: Harness;
beforeAll(async () => {
  budgeted = await startHarness({
    env: {
      MAX_JSON_VALUES: BUDGET.maxValues,
      MAX_JSON_DEPTH: BUDGET.maxDepth,
      VERIFY_RATE_LIMIT: ALLOWANCE,
      VERIFY_RATE_WINDOW_MS: 60_000,
      TRUSTED_PROXIES: 1,
      REQUEST_BODIES_HEAP_SHARE: (ROOM / getHeapStatistics().heap_size_limit).toFixed(8),
      VERIFY_MAX_CONCURRENT_UPLOADS: 10,
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
  /**
   * A raw POST of a body declared by its Content-Length, of which `sent` is sent, with `headers`
   * (lines without their CRLF).
   */
  async function startPost(declared: number, sent: string, headers: string[] = []) {
    const raw = await openRawSocket(budgeted.origin);
    raw.socket.write(
      'POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        headers.map((header) => `${header}\r\n`).join('') +
        `Content-Length: ${declared}\r\n\r\n${sent}`,
    );
    return raw;
  }
  /** An upload of a standard JSON input of `bytes`: its room comes back with its answer. */
  const upload = (bytes: number) =>
    budgeted.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: FROM_SOURCE,
        variables: { input: sourceInput(DAI, { stdJsonInput: largeStdJsonInput(bytes) }) },
      }),
    });

  it('take the allowance once: past it, one is refused 429 RATE_LIMITED without its body', async () => {
    const harness = budgeted;
    harness.simulator.verification.reset();
    // A client of its own: the allowance is its alone.
    const client = { 'x-forwarded-for': '203.0.113.40' };
    // The upload takes one verification before its body is read, and its resolver none.
    const body = JSON.stringify({
      query: FROM_SOURCE,
      variables: { input: sourceInput(GREETER, { stdJsonInput: largeStdJsonInput(400_000) }) },
    });
    const first = await harness.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...client },
      body,
    });
    expect(((await first.json()) as Answer).data?.verifyContractFromSource?.__typename).toBe(
      'VerificationResult',
    );
    const rest: string[] = [];
    for (let i = 1; i < ALLOWANCE; i += 1) {
      const { body } = await harness.execute<{ verifyContractFromSource: { __typename: string } }>(
        FROM_SOURCE,
        { input: sourceInput(DAI) },
        { headers: client },
      );
      rest.push(body.data?.verifyContractFromSource.__typename ?? 'none');
    }
    expect(rest).toHaveLength(ALLOWANCE - 1);
    expect(rest).not.toContain('RateLimitedError');

    // The allowance is spent: 429 at once, with 100 bytes of `HELD` sent.
    const raw = await startPost(HELD, body.slice(0, 100), [
      `X-Forwarded-For: ${client['x-forwarded-for']}`,
    ]);
    const answer = await eventually(
      () => raw.received().includes('"RATE_LIMITED"') && raw.received(),
    );
    raw.socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 429 /);
    expect(answer).toMatch(/\r\nretry-after: \d+\r\n/i);
    expect(harness.simulator.verification.received).toHaveLength(ALLOWANCE);
  });

  /**
   * Holds bodies of `declared` bytes, their bodies unsent, until `check` passes with none of them
   * refused: one refused while the test before was still giving its room back (its held bodies',
   * once the gateway has seen their sockets close) is held again.
   */
  async function holdUntil<T>(declared: number[], check: () => Promise<T | false>) {
    let raws: RawSocket[] = [];
    const result = await eventually(async () => {
      if (raws.length === 0 || raws.some((raw) => raw.received() !== '')) {
        for (const raw of raws) raw.socket.destroy();
        raws = [];
        for (const bytes of declared) raws.push(await startPost(bytes, '{"query":'));
      }
      const checked = await check();
      return checked !== false && raws.every((raw) => raw.received() === '') && checked;
    });
    return { raws, result };
  }

  it('give their room back when they are answered, their keep-alive connection left open', async () => {
    // A client of its own: its allowance is not the other tests'.
    const client = '203.0.113.41';
    const large = JSON.stringify({
      query: FROM_SOURCE,
      variables: {
        input: sourceInput(GREETER, { stdJsonInput: largeStdJsonInput(HELD - 100_000) }),
      },
    });
    // While one of these is counted, a second does not fit.
    expect(2 * jsonHeapBound(Buffer.byteLength(large), BUDGET)).toBeGreaterThan(ROOM);
    const second = () =>
      budgeted.fetch('/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          connection: 'close',
          'x-forwarded-for': client,
        },
        body: large,
      });
    // Answered verified, and answered refused once read (its body a bomb of objects).
    const answered = [
      { body: large, answer: '"VerificationResult"' },
      { body: bodyWith(objects(HELD - 100_000)), answer: '"JSON_TOO_COMPLEX"' },
    ];
    for (const { body, answer } of answered) {
      const raw = await openRawSocket(budgeted.origin);
      let closing = false;
      void raw.ended.then(() => {
        closing = true;
      });
      raw.socket.write(
        'POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          `X-Forwarded-For: ${client}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await eventually(() => raw.received().includes(answer));
      const admitted = await eventually(async () => {
        const response = await second();
        return response.status === 200 && response;
      });
      expect(((await admitted.json()) as Answer).data?.verifyContractFromSource?.__typename).toBe(
        'VerificationResult',
      );
      // Admitted while the first's connection is open: its answer gave the room back, not its close.
      expect(closing).toBe(false);
      expect(raw.socket.destroyed).toBe(false);
      raw.socket.destroy();
    }
    // Given back once each, not more: with one held, a second of its size is refused again.
    const { raws } = await holdUntil([HELD], async () => (await second()).status === 503);
    for (const raw of raws) raw.socket.destroy();
  });

  it('are admitted while the heap their declared bytes count fits REQUEST_BODIES_HEAP_SHARE', async () => {
    // Admitted once the gateway has read its headers: until then, one of its size still fits.
    const { raws, result: refused } = await holdUntil([HELD], async () => {
      const response = await upload(HELD - 100_000);
      return response.status === 503 && response;
    });
    expect(((await refused.json()) as Answer).errors?.[0]?.extensions).toEqual({
      code: 'TOO_MANY_UPLOADS',
      limit: 'REQUEST_BODIES_HEAP_SHARE',
    });
    expect(refused.headers.get('retry-after')).toBe('1');
    const small = await upload(280_000);
    expect(small.status).toBe(200);
    for (const raw of raws) raw.socket.destroy();
    // Given back when its client goes: one of its size fits again.
    await eventually(async () => (await upload(HELD - 100_000)).status === 200);
  });

  it('every body, small ones too, within REQUEST_BODIES_HEAP_SHARE: past it, 503 SERVER_BUSY unread', async () => {
    const harness = budgeted;
    // Held: an upload of `HELD` and two small bodies, which leave less room than a query of
    // 100,000 bytes takes.
    const small = [200_000, 150_000];
    const left =
      ROOM -
      jsonHeapBound(HELD, BUDGET) -
      small.reduce((sum, bytes) => sum + jsonHeapBound(bytes, BUDGET), 0);
    expect(left).toBeLessThan(jsonHeapBound(100_000, BUDGET));
    const query = (padding: number) =>
      harness.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ statusPage { name } } # ${'x'.repeat(padding)}` }),
      });
    const { raws, result: refused } = await holdUntil([HELD, ...small], async () => {
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
    for (const raw of raws) raw.socket.destroy();
    // Given back when their clients go: the query fits, and an upload of the held one's size.
    await eventually(async () => (await query(100_000)).status === 200);
    await eventually(async () => (await upload(HELD - 100_000)).status === 200);
  });
});
