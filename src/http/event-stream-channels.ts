import type { IncomingMessage, ServerResponse } from 'node:http';
import { slowSubscriber } from '../errors/subscription-error.js';
import { type RequestScope, runInRequestScope } from '../observability/request-scope.js';
import {
  SharedSubscriptions,
  type SharedSubscriptionsOptions,
  type SourceStream,
  type SubscriptionSink,
} from '../subscriptions/shared-subscriptions.js';
import type { Answers } from './answers.js';
import { clientAddressOf } from './client-address.js';
import { fetchRequestOf } from './fetch-request.js';
import type { GatewayYoga } from './gateway-yoga.js';
import { drainedOrClosed, nodeHeadersOf } from './send-response.js';
import { sharingKeyOf } from './sharing-key.js';

type Headers = Record<string, string | string[]>;

/**
 * What begins every subscriber's answer: the headers all of them get, and apart from them the
 * `Set-Cookie` of the request that ran (its verification session), which is its client's alone.
 */
interface Head {
  /** Without `set-cookie`. */
  readonly headers: Headers;
  readonly setCookie: string | string[] | undefined;
}

/** An answer without a stream, the same for every subscriber of the operation. */
interface WholeAnswer extends Head {
  readonly status: number;
  readonly body: Buffer;
}

export interface EventStreamChannelsOptions extends SharedSubscriptionsOptions {
  readonly yoga: GatewayYoga;
  /** Proxies in front of the gateway (`TRUSTED_PROXIES`), to find the client. */
  readonly trustedProxies: number;
  /**
   * Bytes one SSE subscriber may leave unread (`SUBSCRIPTION_MAX_BUFFERED_BYTES`): with more than
   * that still unsent when an event comes, it is sent `SLOW_SUBSCRIBER` instead and its answer ends.
   */
  readonly maxBufferedBytes: number;
  /** How every answer goes out: each subscriber's head, with its own request id and log line. */
  readonly answers: Answers;
}

/** What every SSE answer starts with: some browsers show nothing of a stream until a first byte. */
const FIRST_PING = Buffer.from(':\n\n');
const NEXT = Buffer.from('event: next\n');
const COMPLETE = Buffer.from('event: complete\ndata:\n\n');

/** The end of an SSE frame: JSON text never holds a raw newline, so this is only ever one. */
const endsFrame = (chunk: Uint8Array) =>
  chunk.length >= 2 && chunk[chunk.length - 1] === 10 && chunk[chunk.length - 2] === 10;

/**
 * SSE subscriptions over HTTP (`Accept: text/event-stream`), shared by every client who sends the
 * same request (`SharedSubscriptions`): the first one's request runs through Yoga in full, on a
 * signal of the subscription's own rather than that client's; every client of it, the first
 * included, is then one more node:http response written the stream's frames, the same bytes for
 * each, with its own request id. The key is what the answer depends on: the request (method, URL
 * or body, `Accept`) and `sharingKeyOf` the rest.
 */
export function createEventStreamChannels(options: EventStreamChannelsOptions) {
  const { yoga, trustedProxies, maxBufferedBytes, answers } = options;
  const shared = new SharedSubscriptions<Buffer, Head>(options);

  /** Whether the request asks for an event stream and nothing else: those are shared. */
  function accepts(req: IncomingMessage): boolean {
    const accept = req.headers.accept ?? '';
    return accept.startsWith('text/event-stream') && !accept.includes(',');
  }

  /**
   * Serves `req`, whose answer's key (as the response cache makes it) is `requestKey`; `alone`
   * runs it the way every other request is run, for an operation a crowd may not share.
   */
  function serve(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    requestKey: string,
    body: Buffer | undefined,
    alone: () => void,
  ): void {
    const key = `${requestKey}\n${sharingKeyOf(req)}`;
    const subscriber = {
      requestId: scope.requestId,
      transport: 'http' as const,
      clientAddress: clientAddressOf(req, trustedProxies),
    };
    /**
     * Whether this request is the one that ran (it started the source): only its answer carries
     * the `Set-Cookie` the run made. Another subscriber handed an answer or a stream that set one
     * (the operation is not shared, its first client left) runs its request on its own instead:
     * its client's session is not that one.
     */
    let ran = false;
    const headersOf = ({ headers, setCookie }: Head) =>
      ran && setCookie !== undefined ? { ...headers, 'set-cookie': setCookie } : headers;
    const sink: SubscriptionSink<Buffer, Head> = {
      begin(head) {
        if (answers.head(req, res, scope, 200, headersOf(head))) res.write(FIRST_PING);
      },
      next(frame) {
        if (res.destroyed || res.writableEnded) return;
        // What is still unsent of the events before: a client reading along has none of it.
        if (res.writableLength <= maxBufferedBytes) {
          res.write(frame);
          return;
        }
        leave('slow');
        res.end(errorFrame(slowSubscriber('SUBSCRIPTION_MAX_BUFFERED_BYTES', maxBufferedBytes)));
      },
      complete() {
        if (!res.writableEnded) res.end();
      },
      refuse(error, head) {
        if (answers.head(req, res, scope, 200, headersOf(head))) res.end(errorFrame(error));
      },
      answer(answer) {
        const whole = answer as WholeAnswer;
        if (!ran && whole.setCookie !== undefined) alone();
        else if (answers.head(req, res, scope, whole.status, headersOf(whole))) res.end(whole.body);
      },
      alone(own) {
        if (!own) return alone();
        if (!ran && own.meta.setCookie !== undefined) {
          own.stop();
          return alone();
        }
        if (answers.head(req, res, scope, 200, headersOf(own.meta))) void streamFrames(res, own);
        // Its client went away before the head: nobody reads the stream.
        else own.stop();
      },
      fail(error) {
        answers.failed(req, res, scope, error);
      },
    };
    const leave = shared.join(key, subscriber, sink, (sharedBy) => {
      ran = true;
      return runInRequestScope(scope, async () => {
        const controller = new AbortController();
        const response = await yoga.handleRequest(
          fetchRequestOf(req, { body, signal: controller.signal }),
          {
            req,
            subscriber: { transport: 'http', sharedBy },
          },
        );
        const { 'set-cookie': setCookie, ...headers } = nodeHeadersOf(response);
        if (
          response.status === 200 &&
          response.body &&
          response.headers.get('content-type')?.startsWith('text/event-stream')
        ) {
          const reader = response.body.getReader();
          return {
            kind: 'stream',
            items: framesOf(reader),
            meta: { headers, setCookie },
            isEvent: (frame: Buffer) => frame.subarray(0, NEXT.length).equals(NEXT),
            stop: () => {
              controller.abort();
              void reader.cancel().catch(() => {});
            },
          } satisfies SourceStream<Buffer, Head>;
        }
        const answer: WholeAnswer = {
          status: response.status,
          headers,
          setCookie,
          body: Buffer.from(await response.arrayBuffer()),
        };
        return { kind: 'answer', answer } as const;
      });
    });
    res.once('close', () => leave('client'));
  }

  return { accepts, serve };
}

export type EventStreamChannels = ReturnType<typeof createEventStreamChannels>;

/** An SSE `next` event carrying `error`, then `complete`: how Yoga ends a stream with an error. */
function errorFrame(error: { toJSON(): unknown }): Buffer {
  return Buffer.concat([
    NEXT,
    Buffer.from(`data: ${JSON.stringify({ errors: [error.toJSON()] })}\n\n`),
    COMPLETE,
  ]);
}

/** The whole frames of an SSE body, each one buffer, whatever chunks the stream came in. */
async function* framesOf(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<Buffer> {
  let parts: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    parts.push(value);
    if (endsFrame(value)) {
      yield Buffer.concat(parts);
      parts = [];
    }
  }
}

/** Writes a stream nobody else shares to its one client, as `streamResponse` would. */
async function streamFrames(res: ServerResponse, own: SourceStream<Buffer, Head>): Promise<void> {
  res.once('close', own.stop);
  try {
    for (;;) {
      const { done, value } = await own.items.next();
      if (done || res.destroyed) break;
      if (!res.write(value)) await drainedOrClosed(res);
    }
    res.end();
  } catch {
    res.destroy();
  }
}
