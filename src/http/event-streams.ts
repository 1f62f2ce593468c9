import { hash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseCookie } from 'cookie';
import { slowSubscriber } from '../errors/subscription-error.js';
import { type JsonBudget, parseJsonWithin } from '../json-budget.js';
import { type RequestScope, runInRequestScope } from '../observability/request-scope.js';
import { SESSION_COOKIE } from '../plugins/use-verification-session.js';
import type {
  OperationParams,
  Payload,
  Sink,
  SourceStart,
  SourceStream,
  SubscriptionHub,
  Topic,
} from '../subscriptions/hub.js';
import type { Answers } from './answers.js';
import { clientAddressOf } from './client-address.js';
import { fetchRequestOf } from './fetch-request.js';
import type { GatewayServerContext, GatewayYoga } from './gateway-yoga.js';
import { drainedOrClosed, nodeHeadersOf } from './send-response.js';

type Headers = Record<string, string | string[]>;

/** What begins every subscriber's answer: the source's headers, and apart its `Set-Cookie`. */
interface Head {
  readonly headers: Headers;
  readonly setCookie: string | string[] | undefined;
}

/** An answer without a stream, the same for every subscriber who waited for it. */
export interface WholeAnswer extends Head {
  readonly status: number;
  readonly body: Buffer;
}

export interface EventStreamsOptions {
  readonly hub: SubscriptionHub;
  readonly yoga: GatewayYoga;
  /** Proxies in front of the gateway (`TRUSTED_PROXIES`), to find the client. */
  readonly trustedProxies: number;
  /**
   * Bytes one SSE subscriber may leave unread (`SUBSCRIPTION_MAX_BUFFERED_BYTES`): with more than
   * that still unsent when a payload comes, it is sent `SLOW_SUBSCRIBER` instead and its answer ends.
   */
  readonly maxBufferedBytes: number;
  /** What a request's parameters may hold (`MAX_JSON_VALUES`, `MAX_JSON_DEPTH`). */
  readonly json: JsonBudget;
  /** How every answer goes out: each subscriber's head, with its own request id and log line. */
  readonly answers: Answers;
}

/** What every SSE answer starts with: some browsers show nothing of a stream until a first byte. */
const PING = Buffer.from(':\n\n');
const NEXT = 'event: next\ndata: ';
const COMPLETE = Buffer.from('event: complete\ndata:\n\n');

/** A payload as an SSE `next` event: the source's own frame, or made once. */
export const frameOf = (payload: Payload) =>
  (payload.sse ??= Buffer.from(`${NEXT}${payload.json}\n\n`));

/**
 * Subscriptions over SSE (`Accept: text/event-stream`): each client is a sink of its topic in the
 * hub, a node:http response written each payload's frame, the same bytes for all, with its own
 * request id and log line. The topic's source is the first one's request, run through Yoga.
 */
export function createEventStreams(options: EventStreamsOptions) {
  const { hub, yoga, trustedProxies, maxBufferedBytes, answers, json } = options;

  /** Whether the request asks for an event stream and nothing else: those are the hub's. */
  function accepts(req: IncomingMessage): boolean {
    const accept = req.headers.accept ?? '';
    return accept.startsWith('text/event-stream') && !accept.includes(',');
  }

  /** Serves `req`; `alone` runs it as every other request is run, when it cannot be shared. */
  function serve(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    body: Buffer | undefined,
    alone: () => void,
  ): void {
    /**
     * Whether this request is the one that ran: only its answer carries the `Set-Cookie` the run
     * made; another handed such an answer runs its request on its own (its session is not that one).
     */
    let ran = false;
    const headersOf = ({ headers, setCookie }: Head) =>
      ran && setCookie !== undefined ? { ...headers, 'set-cookie': setCookie } : headers;
    const sink: Sink = {
      begin(head) {
        if (answers.head(req, res, scope, 200, headersOf(head as Head))) res.write(PING);
      },
      next(payload) {
        if (res.destroyed || res.writableEnded) return;
        // What is still unsent of the payloads before: a client reading along has none of it.
        if (res.writableLength <= maxBufferedBytes) {
          res.write(frameOf(payload));
          return;
        }
        leave('slow');
        res.end(errorFrame(slowSubscriber('SUBSCRIPTION_MAX_BUFFERED_BYTES', maxBufferedBytes)));
      },
      ping() {
        if (!res.destroyed && !res.writableEnded) res.write(PING);
      },
      complete() {
        if (!res.writableEnded) res.end(COMPLETE);
      },
      refuse(error, head) {
        if (answers.head(req, res, scope, 200, headersOf(head as Head))) res.end(errorFrame(error));
      },
      answer(answer) {
        const whole = answer as WholeAnswer;
        if (!ran && whole.setCookie !== undefined) alone();
        else if (answers.head(req, res, scope, whole.status, headersOf(whole))) res.end(whole.body);
      },
      alone(own) {
        if (!own) return alone();
        const head = own.head as Head;
        if (!ran && head.setCookie !== undefined) {
          own.stop();
          return alone();
        }
        if (answers.head(req, res, scope, 200, headersOf(head))) void writeOwn(res, own);
        // Its client went away before the head: nobody reads the stream.
        else own.stop();
      },
      fail(error) {
        answers.failed(req, res, scope, error);
      },
    };
    const leave = hub.join({
      params: paramsOf(req, body, json),
      session: sessionOf(req.headers.cookie),
      subscriber: {
        requestId: scope.requestId,
        transport: 'http',
        clientAddress: clientAddressOf(req, trustedProxies),
      },
      sink,
      start: (topic) => {
        ran = true;
        return runInRequestScope(scope, () =>
          runSource(yoga, (signal) => fetchRequestOf(req, { body, signal }), { req, topic }),
        );
      },
    });
    res.once('close', () => leave('client'));
  }

  return { accepts, serve };
}

export type EventStreams = ReturnType<typeof createEventStreams>;

/**
 * Runs a topic's source: its first subscriber's request through Yoga's whole pipeline (on a signal
 * of the topic's own), asking for an event stream; its `next` events are the topic's payloads.
 */
export async function runSource(
  yoga: GatewayYoga,
  requestOf: (signal: AbortSignal) => Request,
  context: GatewayServerContext & { readonly topic: Topic },
): Promise<SourceStart> {
  const controller = new AbortController();
  const response = await yoga.handleRequest(requestOf(controller.signal), context);
  const { 'set-cookie': setCookie, ...headers } = nodeHeadersOf(response);
  if (
    response.status === 200 &&
    response.body &&
    response.headers.get('content-type')?.startsWith('text/event-stream')
  ) {
    const reader = response.body.getReader();
    return {
      kind: 'stream',
      payloads: payloadsOf(reader),
      head: { headers, setCookie } satisfies Head,
      stop: () => {
        controller.abort();
        void reader.cancel().catch(() => {});
      },
    };
  }
  const body = Buffer.from(await response.arrayBuffer());
  const answer: WholeAnswer = { status: response.status, headers, setCookie, body };
  return { kind: 'answer', answer };
}

/** The parameters of a GraphQL request over HTTP (URL or JSON body); undefined when unreadable. */
function paramsOf(
  req: IncomingMessage,
  body: Buffer | undefined,
  budget: JsonBudget,
): OperationParams | undefined {
  try {
    if (body) return parseJsonWithin(body.toString(), budget) as OperationParams;
    const search = new URL(req.url ?? '/', 'http://gateway').searchParams;
    const json = (name: string) => {
      const value = search.get(name);
      return value === null ? undefined : parseJsonWithin(value, budget);
    };
    return {
      query: search.get('query') ?? undefined,
      documentId: search.get('documentId') ?? undefined,
      operationName: search.get('operationName') ?? undefined,
      variables: json('variables'),
      extensions: json('extensions'),
    };
  } catch {
    return undefined;
  }
}

/** The verification session a request carries (its cookie, as a digest), if any. */
export function sessionOf(cookie: string | undefined): string | undefined {
  const session = cookie?.includes(SESSION_COOKIE)
    ? parseCookie(cookie)[SESSION_COOKIE]
    : undefined;
  return session ? hash('sha256', session, 'base64url') : undefined;
}

/** An SSE `next` event carrying `error`, then `complete`: how Yoga ends a stream with an error. */
function errorFrame(error: { toJSON(): unknown }): Buffer {
  return Buffer.concat([frameOf({ json: JSON.stringify({ errors: [error.toJSON()] }) }), COMPLETE]);
}

/**
 * The payloads of an SSE body: each `next` event's data with its frame (`null` for a comment, a
 * keep-alive), whatever chunks the stream came in, until `complete`.
 */
async function* payloadsOf(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): AsyncGenerator<Payload | null> {
  let pending = Buffer.alloc(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    pending = pending.length === 0 ? Buffer.from(value) : Buffer.concat([pending, value]);
    // JSON text never holds a raw newline: a blank line only ever ends an event.
    for (let end = pending.indexOf('\n\n'); end >= 0; end = pending.indexOf('\n\n')) {
      const frame = pending.subarray(0, end + 2);
      pending = pending.subarray(end + 2);
      if (frame[0] === 0x3a) yield null;
      else if (frame.subarray(0, 11).toString() === 'event: next') {
        const text = frame.toString();
        yield { json: text.slice(text.indexOf('data: ') + 6, -2), sse: frame };
      } else if (frame.subarray(0, 15).toString() === 'event: complete') return;
    }
  }
}

/** Writes a stream nobody else shares to its one client, as Yoga wrote it. */
async function writeOwn(res: ServerResponse, own: SourceStream): Promise<void> {
  res.once('close', own.stop);
  try {
    for (;;) {
      const { done, value } = await own.payloads.next();
      if (done || res.destroyed) break;
      if (!res.write(value ? frameOf(value) : PING)) await drainedOrClosed(res);
    }
    res.end(COMPLETE);
  } catch {
    res.destroy();
  }
}
