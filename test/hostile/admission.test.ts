import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { DEFAULT_MANIFEST } from '../../src/persisted-documents/manifest.js';
import {
  ENTRY_OVERHEAD_BYTES,
  registeredDocuments,
} from '../../src/persisted-documents/registered-documents.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { type InProcessGateway, startInProcess } from '../helpers/in-process.js';
import { initialise, openedSocket, sseResults } from '../helpers/subscriptions.js';

/*
 * One admission rule for every transport: the same hostile operations, sent over HTTP POST, HTTP
 * GET, SSE and graphql-ws, get the same errors (persisted documents only, documentId and APQ,
 * limits), shaped the same way (no `extensions.http` over the socket).
 */

const manifest = JSON.parse(readFileSync(DEFAULT_MANIFEST, 'utf8')) as Record<string, string>;
const [statusIndicatorId, statusIndicator] = Object.entries(manifest).find(([, text]) =>
  text.includes('query StatusIndicator'),
) ?? ['', ''];
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

type Transport = 'POST' | 'GET' | 'SSE' | 'WebSocket';
const TRANSPORTS: readonly Transport[] = ['POST', 'GET', 'SSE', 'WebSocket'];

interface GraphQLAnswer {
  readonly data?: unknown;
  readonly errors?: { message: string; extensions?: Record<string, unknown> }[];
}
/** An answer, or how the transport refused the request before reading it. */
type Outcome = GraphQLAnswer | { readonly refused: number };

interface HostileCase {
  readonly name: string;
  /** Which gateway: one with PERSISTED_DOCUMENTS_ONLY, or one that runs any text. */
  readonly only: boolean;
  readonly params: Record<string, unknown>;
  readonly code: string;
}

const deep =
  '{ statusPage { components { group { children { group { children { group { name } } } } } } } }';
const aliases = `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: statusPage { name }`).join(' ')} }`;
const tokens = `{ statusPage { ${'name '.repeat(2_100)} } }`;
const notPersisted = '{ statusPage { name } }';

const CASES: readonly HostileCase[] = [
  {
    name: 'text not in the manifest, with PERSISTED_DOCUMENTS_ONLY',
    only: true,
    params: { query: notPersisted },
    code: 'PERSISTED_DOCUMENT_REQUIRED',
  },
  {
    name: 'the federation SDL, with PERSISTED_DOCUMENTS_ONLY',
    only: true,
    params: { query: '{ _service { sdl } }' },
    code: 'PERSISTED_DOCUMENT_REQUIRED',
  },
  {
    name: 'APQ registering a text not in the manifest, with PERSISTED_DOCUMENTS_ONLY',
    only: true,
    params: {
      query: notPersisted,
      extensions: { persistedQuery: { version: 1, sha256Hash: sha256(notPersisted) } },
    },
    code: 'PERSISTED_DOCUMENT_REQUIRED',
  },
  {
    name: 'a malformed documentId',
    only: true,
    params: { documentId: 'sha256:nope' },
    code: 'BAD_REQUEST',
  },
  {
    name: 'an unknown documentId',
    only: true,
    params: { documentId: `sha256:${'0'.repeat(64)}` },
    code: 'PERSISTED_QUERY_NOT_FOUND',
  },
  {
    name: 'documentId and query together',
    only: false,
    params: { documentId: statusIndicatorId, query: notPersisted },
    code: 'BAD_REQUEST',
  },
  {
    name: 'an APQ hash that is not the hash of the text',
    only: false,
    params: {
      query: notPersisted,
      extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } },
    },
    code: 'BAD_REQUEST',
  },
  {
    name: 'an unknown APQ hash',
    only: false,
    params: { extensions: { persistedQuery: { version: 1, sha256Hash: '1'.repeat(64) } } },
    code: 'PERSISTED_QUERY_NOT_FOUND',
  },
  { name: 'too deep', only: false, params: { query: deep }, code: 'BAD_USER_INPUT' },
  { name: 'too many aliases', only: false, params: { query: aliases }, code: 'BAD_USER_INPUT' },
  { name: 'too many tokens', only: false, params: { query: tokens }, code: 'BAD_USER_INPUT' },
  {
    name: 'a document that does not parse',
    only: false,
    params: { query: '{ statusPage { ' },
    code: 'GRAPHQL_PARSE_FAILED',
  },
];

/** An answer as the client read it, from either kind of gateway. */
interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** A gateway the transports are sent to: on a port, or its listener in process. */
interface Target {
  request(
    path: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string },
  ): Promise<Answer>;
  /** A WebSocket on `/graphql` offering `graphql-transport-ws`, open. */
  socket(): Promise<WebSocket>;
}

const onPort = (harness: Harness): Target => ({
  async request(path, init) {
    const response = await harness.fetch(path, init);
    return { status: response.status, headers: response.headers, text: await response.text() };
  },
  socket: () => openedSocket(harness.origin),
});

const inProcess = (gateway: InProcessGateway): Target => ({
  request: gateway.request,
  socket: () => gateway.openedWebSocket(),
});

/*
 * The gateway with PERSISTED_DOCUMENTS_ONLY runs a manifest document, which reads the status
 * feed: on a port, with its simulator. The other runs nothing that asks an upstream (what it
 * refuses it refuses before running; what it runs needs none): the listener alone, in process.
 */
let onlyHarness: Harness;
let openGateway: InProcessGateway;
let only: Target;
let open: Target;
beforeAll(async () => {
  openGateway = startInProcess({ env: { MAX_DEPTH: 6 }, logLevel: 'silent' });
  open = inProcess(openGateway);
  onlyHarness = await startHarness({ env: { PERSISTED_DOCUMENTS_ONLY: true }, logLevel: 'silent' });
  only = onPort(onlyHarness);
});
afterAll(async () => {
  await Promise.all([onlyHarness?.close(), openGateway?.close()]);
});

const JSON_ACCEPT = 'application/graphql-response+json, application/json;q=0.9';

async function send(
  target: Target,
  transport: Transport,
  params: Record<string, unknown>,
): Promise<Outcome> {
  if (transport === 'WebSocket') return overWebSocket(target, params);
  if (transport === 'GET') {
    const search = new URLSearchParams(
      Object.entries(params).map(([name, value]) => [
        name,
        typeof value === 'string' ? value : JSON.stringify(value),
      ]),
    );
    const response = await target.request(`/graphql?${search}`, {
      headers: { accept: JSON_ACCEPT },
    });
    return answerOf(response);
  }
  const response = await target.request('/graphql', {
    method: 'POST',
    headers: {
      accept: transport === 'SSE' ? 'text/event-stream' : JSON_ACCEPT,
      'content-type': 'application/json',
    },
    body: JSON.stringify(params),
  });
  return answerOf(response);
}

function answerOf(response: Answer): Outcome {
  const { text } = response;
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const [first] = sseResults(text);
    if (first === undefined) throw new Error(`no event in ${text}`);
    return first as GraphQLAnswer;
  }
  if (!response.headers.get('content-type')?.includes('json')) return { refused: response.status };
  return JSON.parse(text) as GraphQLAnswer;
}

/** Runs one operation on a fresh graphql-ws socket: its first `next` or `error`, or its close. */
async function overWebSocket(target: Target, payload: Record<string, unknown>): Promise<Outcome> {
  const socket = await target.socket();
  const ack = await initialise(socket);
  if (!ack.acked) return { refused: ack.code };
  return new Promise((resolve) => {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; payload?: unknown };
      if (message.type === 'next') {
        resolve(message.payload as GraphQLAnswer);
        socket.close();
      } else if (message.type === 'error') {
        resolve({ errors: message.payload as GraphQLAnswer['errors'] });
        socket.close();
      }
    });
    socket.on('close', (code) => resolve({ refused: code }));
    socket.send(JSON.stringify({ type: 'subscribe', id: '1', payload }));
  });
}

describe('one admission rule for HTTP POST, HTTP GET, SSE and graphql-ws', () => {
  for (const hostile of CASES) {
    it(`${hostile.name}: ${hostile.code} on every transport, shaped alike`, async () => {
      const target = hostile.only ? only : open;
      const outcomes = await Promise.all(
        TRANSPORTS.map((transport) => send(target, transport, hostile.params)),
      );
      const byTransport = Object.fromEntries(TRANSPORTS.map((t, i) => [t, outcomes[i]]));
      for (const transport of TRANSPORTS) {
        expect(byTransport[transport], transport).toMatchObject({
          errors: [{ extensions: { code: hostile.code } }],
        });
        expect(JSON.stringify(byTransport[transport]), transport).not.toMatch(/"http"|unexpected/);
      }
      // The same errors, word for word: one rule, not four copies of it.
      for (const transport of TRANSPORTS) {
        expect((byTransport[transport] as GraphQLAnswer).errors, transport).toEqual(
          (byTransport.POST as GraphQLAnswer).errors,
        );
      }
    });
  }

  it('runs a manifest document by documentId on every transport, with PERSISTED_DOCUMENTS_ONLY', async () => {
    for (const transport of TRANSPORTS) {
      expect(
        await send(only, transport, { documentId: statusIndicatorId }),
        transport,
      ).toMatchObject({ data: { statusPage: { status: { indicator: expect.any(String) } } } });
      expect(
        await send(only, transport, {
          extensions: { persistedQuery: { version: 1, sha256Hash: sha256(statusIndicator) } },
        }),
        transport,
      ).toMatchObject({ data: { statusPage: { status: { indicator: expect.any(String) } } } });
    }
  });

  it('refuses a mutation wherever it is not a POST: GET and WebSocket (the handshake is a GET)', async () => {
    const mutation =
      'mutation { verifyContract(input: { chainId: "1", address: "0x0" }) { __typename } }';
    const [post, get, sse, socket] = await Promise.all(
      TRANSPORTS.map((transport) => send(open, transport, { query: mutation })),
    );
    expect(post).toMatchObject({ data: { verifyContract: { __typename: expect.any(String) } } });
    expect(sse).toEqual(post);
    const refusal = (message: string) => ({
      errors: [{ message, extensions: { code: 'BAD_REQUEST' } }],
    });
    expect(get).toEqual(refusal('Can only perform a mutation operation from a POST request.'));
    // Over a socket, what to do instead: it speaks of no HTTP method the client did not choose.
    expect(socket).toEqual(
      refusal(
        'Mutations are not run over the WebSocket: send this one as an HTTP POST to /graphql (queries and subscriptions may use either).',
      ),
    );
  });

  it('refuses a 2 MB document on every transport before reading it', async () => {
    const huge = { query: `{ statusPage { name } } #${'x'.repeat(2_000_000)}` };
    const [post, get, sse, socket] = await Promise.all(
      TRANSPORTS.map((transport) => send(open, transport, huge)),
    );
    expect(post).toMatchObject({ errors: [{ extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
    expect(sse).toEqual(post);
    // A URL that long is over node's header limit: refused (431) by the server before any
    // listener sees it, with the gateway's error body.
    expect(get).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    // A message over MAX_BODY_BYTES: ws stops at the frame's header, before buffering it.
    expect(socket).toEqual({ refused: 1009 });
  });

  it('registers through APQ only a document that parses and validates, on every transport', async () => {
    for (const [index, transport] of TRANSPORTS.entries()) {
      for (const text of [`{ nope${index} }`, `{ statusPage { name ${index}`]) {
        const persistedQuery = { version: 1, sha256Hash: sha256(text) };
        const registering = await send(open, transport, {
          query: text,
          extensions: { persistedQuery },
        });
        expect(registering, transport).toMatchObject({ errors: [{}] });
        expect(
          await send(open, transport, { extensions: { persistedQuery } }),
          transport,
        ).toMatchObject({
          errors: [{ extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }],
        });
      }
      const valid = `{ __typename } # ${transport}`;
      const persistedQuery = { version: 1, sha256Hash: sha256(valid) };
      await send(open, transport, { query: valid, extensions: { persistedQuery } });
      expect(await send(open, transport, { extensions: { persistedQuery } }), transport).toEqual({
        data: { __typename: 'Query' },
      });
    }
  });
});

describe("APQ's store", () => {
  it('counts each entry with its overhead, so tiny documents cannot fill memory', () => {
    const store = registeredDocuments(1_000_000);
    for (let i = 0; i < 100_000; i++) store.set(sha256(String(i)), '{a}');
    expect(store.calculatedSize).toBeLessThanOrEqual(1_000_000);
    // Three Latin-1 characters: three bytes.
    expect(store.size).toBe(Math.floor(1_000_000 / (ENTRY_OVERHEAD_BYTES + 3)));
    // The least recently used went first.
    expect(store.get(sha256('99999'))).toBe('{a}');
    expect(store.get(sha256('0'))).toBeUndefined();
  });
});
