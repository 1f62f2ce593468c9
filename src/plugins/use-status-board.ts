import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Plugin } from 'graphql-yoga';
import { documentIdOf } from '../persisted-documents/manifest.js';

/** Where the board's files are: `public/status-board/` at the package root, from src/ and dist/ alike. */
const BOARD_DIRECTORY = new URL('../../public/status-board/', import.meta.url);

/** What the board's page may load and talk to: its own scripts, style and icon, and the gateway. */
const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Pages on one screen of the board, at most: a screen's pages are followed by one subscription,
 * which may name at most `MAX_PAGES_PER_OPERATION` of them, and each costs its feed's four
 * documents polled while it is on screen. 24 fill two, three or four columns evenly.
 */
export const BOARD_SCREEN_SIZE = 24;

const readBoardFile = (name: string) => readFileSync(new URL(name, BOARD_DIRECTORY), 'utf8');

/**
 * The board's operations (`board.graphql`, one document of several named operations), which its
 * script asks for by id: the gateway adds it to the persisted documents, so that the board works
 * where only persisted documents are accepted.
 */
export const readStatusBoardDocument = (): string => readBoardFile('board.graphql');

function boardFile(body: string, contentType: string, extra: Record<string, string> = {}) {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return {
    body,
    etag,
    headers: {
      'content-type': contentType,
      etag,
      // Revalidated on each load (a 304 while unchanged), so that a new deployment shows at once.
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      ...extra,
    },
  };
}

const SCRIPT = 'text/javascript; charset=utf-8';

export interface StatusBoardOptions {
  /** Pages an operation may read (`MAX_PAGES_PER_OPERATION`): a screen shows no more. */
  readonly maxPagesPerOperation: number;
}

/**
 * The live status board at `GET /status`: a small static page (public/status-board/, plain HTML,
 * CSS and JavaScript modules, served as they are but for the id of its operations' document and
 * its screen size written into the page) that lists the configured pages through `pages` on each
 * load (so a reloaded `STATUS_PAGES_FILE` shows on the next), groups them by tag, shows them a
 * screen at a time (`?tag=`, `?untagged`, `?page=`; `?slug=` one page alone), and follows only
 * the pages on screen with the `statusPageChanged` subscription over server-sent events, so that
 * it updates itself within seconds of a change in their feeds. The files are read once, at start.
 */
export function useStatusBoard({ maxPagesPerOperation }: StatusBoardOptions): Plugin {
  const page = boardFile(
    readBoardFile('index.html')
      .replace('content="BOARD_DOCUMENT"', `content="${documentIdOf(readStatusBoardDocument())}"`)
      .replace(
        'content="BOARD_PAGE_SIZE"',
        `content="${Math.min(BOARD_SCREEN_SIZE, maxPagesPerOperation)}"`,
      ),
    'text/html; charset=utf-8',
    { 'content-security-policy': PAGE_POLICY, 'x-frame-options': 'DENY' },
  );
  const files = new Map([
    ['/status', page],
    ['/status/', page],
    ['/status/board.js', boardFile(readBoardFile('board.js'), SCRIPT)],
    ['/status/event-stream.js', boardFile(readBoardFile('event-stream.js'), SCRIPT)],
    ['/status/update-body.js', boardFile(readBoardFile('update-body.js'), SCRIPT)],
    ['/status/board.css', boardFile(readBoardFile('board.css'), 'text/css; charset=utf-8')],
    [
      '/status/favicon.svg',
      // An image, yet a document when opened alone: it may run and load nothing.
      boardFile(readBoardFile('favicon.svg'), 'image/svg+xml', {
        'content-security-policy': "default-src 'none'",
      }),
    ],
  ]);

  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      const file = files.get(url.pathname);
      if (!file || (request.method !== 'GET' && request.method !== 'HEAD')) return;
      const unchanged = request.headers.get('if-none-match') === file.etag;
      endResponse(
        new fetchAPI.Response(unchanged || request.method === 'HEAD' ? null : file.body, {
          status: unchanged ? 304 : 200,
          headers: file.headers,
        }),
      );
    },
  };
}
