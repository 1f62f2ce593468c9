import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StatusPageConfig } from '../config.js';
import type { RequestScope } from '../observability/request-scope.js';
import { STATUSPAGE_WEBHOOKS } from '../observability/route.js';
import type { Answers } from './answers.js';

export interface StatuspageWebhooksOptions {
  /**
   * The configured pages, asked as each webhook comes (the list may change while the gateway
   * runs): whether a slug is one, and its `webhookToken`.
   */
  readonly pages: {
    has(slug: string): boolean;
    config(slug: string): Pick<StatusPageConfig, 'webhookToken'>;
  };
  /** Refetches a page whose webhook was admitted, paced (`WebhookRefetches`). */
  readonly refetches: { request(slug: string): void };
  readonly answers: Answers;
  /** The largest body a webhook may send (`MAX_BODY_BYTES`); larger gets 413. */
  readonly maxBodyBytes: number;
  /**
   * Time a webhook's sender gets to send its whole body; slower gets 408.
   * @default 10000 (as the GraphQL endpoint's)
   */
  readonly bodyTimeoutMs?: number;
}

/** What became of a webhook's body: read to its end, over the limit, too slow, or its client left. */
type BodyOutcome = 'read' | 'too large' | 'too slow' | 'gone';

/** The one answer to a slug that is not a page's, a page without a token, and a wrong token. */
const NOT_FOUND = 'No webhook is served at this path.';

/** What a page without `webhookToken` is compared with: no token is ever its digest. */
const NO_TOKEN = createHash('sha256').update(randomBytes(32)).digest();

const digest = (token: string) => createHash('sha256').update(token).digest();

/** A token sent as `Authorization: Bearer <token>`, for senders that cannot put it in the path. */
const BEARER = /^Bearer +([^ ]+) *$/i;

/**
 * `POST /webhooks/statuspage/<slug>/<token>` (or `/webhooks/statuspage/<slug>` with
 * `Authorization: Bearer <token>`): a page's Statuspage webhook, which Statuspage sends unsigned to
 * the URL its subscriber gave. The page's `webhookToken` admits it, compared in constant time; the
 * body is only a hint that the page changed, counted as it is read (never kept nor parsed, at most
 * `maxBodyBytes`), and the page is refetched (`refetches`, paced per page). An unknown slug, a
 * page without a token and a wrong or missing token are the same 404 `NOT_FOUND`, before a byte of
 * the body is read, so that no answer tells which slugs exist; another method is 405. Answered
 * through `Answers` as every answer is (its log line names the path without the token).
 */
export function createStatuspageWebhooks(options: StatuspageWebhooksOptions) {
  const { pages, refetches, answers, maxBodyBytes, bodyTimeoutMs = 10_000 } = options;

  const { refuse } = answers;

  /** The page whose token `req` sends, if it sends a page's right token. */
  function admittedSlug(req: IncomingMessage): string | undefined {
    const url = req.url as string;
    const query = url.indexOf('?');
    const path = url.slice(STATUSPAGE_WEBHOOKS.length, query === -1 ? undefined : query);
    const [slug = '', inPath, ...more] = path.split('/');
    if (more.length > 0) return undefined;
    const sent = inPath || BEARER.exec(req.headers.authorization ?? '')?.[1];
    const token = pages.has(slug) ? pages.config(slug).webhookToken : undefined;
    // Digests of equal length whatever was sent: the time taken tells nothing of the token.
    const matches = timingSafeEqual(
      digest(sent ?? ''),
      token === undefined ? NO_TOKEN : digest(token),
    );
    return matches && sent !== undefined && token !== undefined ? slug : undefined;
  }

  return {
    /** Whether the request is a status page webhook's: the front door sends it here. */
    accepts: (req: IncomingMessage): boolean => req.url?.startsWith(STATUSPAGE_WEBHOOKS) === true,

    /** Answers a webhook `accepts` took, in the request scope the front door opened. */
    handle(req: IncomingMessage, res: ServerResponse, scope: RequestScope): void {
      if (req.method !== 'POST') {
        refuse(req, res, scope, 405, 'METHOD_NOT_ALLOWED', 'A webhook is a POST.', {
          allow: 'POST',
        });
        return;
      }
      const slug = admittedSlug(req);
      if (slug === undefined) {
        refuse(req, res, scope, 404, 'NOT_FOUND', NOT_FOUND);
        return;
      }
      void readBody(req, maxBodyBytes, bodyTimeoutMs).then((outcome) => {
        if (outcome === 'gone') answers.gone(req, scope);
        else if (outcome === 'too large') {
          refuse(
            req,
            res,
            scope,
            413,
            'PAYLOAD_TOO_LARGE',
            `The request body is larger than the limit of ${maxBodyBytes} bytes.`,
          );
        } else if (outcome === 'too slow') {
          refuse(
            req,
            res,
            scope,
            408,
            'REQUEST_TIMEOUT',
            'The request body did not arrive in time.',
            {
              connection: 'close',
            },
          );
        } else {
          refetches.request(slug);
          if (answers.head(req, res, scope, 202, { 'content-length': '0' })) res.end();
        }
      });
    },
  };
}

/**
 * Reads `req`'s body to its end, counting its bytes and keeping none, up to `maxBytes` and
 * `timeoutMs`; a declared length over `maxBytes` is refused unread. Whatever is left unread when
 * it stops, node drains once the answer is sent.
 */
function readBody(req: IncomingMessage, maxBytes: number, timeoutMs: number): Promise<BodyOutcome> {
  if (Number(req.headers['content-length']) > maxBytes) return Promise.resolve('too large');
  return new Promise((resolve) => {
    let size = 0;
    const done = (outcome: BodyOutcome) => {
      clearTimeout(timer);
      req.off('data', counted).off('end', ended).off('close', closed);
      resolve(outcome);
    };
    const counted = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) done('too large');
    };
    const ended = () => done('read');
    // A request aborted mid-body never ends.
    const closed = () => {
      if (!req.complete) done('gone');
    };
    const timer = setTimeout(() => done('too slow'), timeoutMs);
    req.on('data', counted).once('end', ended).once('close', closed);
    // node emits a request's error only when someone listens; `close` follows it.
    req.on('error', () => {});
  });
}

export type StatuspageWebhooks = ReturnType<typeof createStatuspageWebhooks>;
