import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestScope } from '../observability/request-scope.js';
import type { Answers } from './answers.js';
import { type EncodedAnswer, encodeAnswer } from './response-cache/encoded-answer.js';

/**
 * How long browsers and CDNs may keep the page without asking: it changes only with the gateway's
 * version, and after a deploy the new one reaches everyone within this. Past it, the ETag makes
 * asking again a 304.
 */
const CACHE_CONTROL = 'public, max-age=600';

/**
 * GraphiQL's page (about 9 MB of HTML and script): rendered on first use, compressed once (brotli
 * about 1.9 MB, gzip 2.4 MB), and served from memory with an ETag, so that a browser reloading it
 * gets a 304 and one that has not seen it gets the coded bytes.
 */
export function createGraphiQLPage(options: {
  /** Renders the page's HTML, as Yoga would. */
  readonly render: () => Promise<string>;
  readonly answers: Answers;
}) {
  const { render, answers } = options;
  let page: Promise<EncodedAnswer> | undefined;

  /** Whether a request is a browser asking for the page (Yoga's own rule: a GET taking HTML). */
  const asksForPage = (req: IncomingMessage) =>
    req.method === 'GET' && req.headers.accept?.includes('text/html') === true;

  function serve(req: IncomingMessage, res: ServerResponse, scope: RequestScope): void {
    page ??= render().then((html) =>
      encodeAnswer(Buffer.from(html, 'utf8'), 'text/html; charset=utf-8', answers.vary),
    );
    page.then(
      (answer) => answers.kept(req, res, scope, answer, CACHE_CONTROL),
      (error: unknown) => {
        page = undefined;
        answers.failed(req, res, scope, error);
      },
    );
  }

  return { asksForPage, serve };
}

export type GraphiQLPage = ReturnType<typeof createGraphiQLPage>;
