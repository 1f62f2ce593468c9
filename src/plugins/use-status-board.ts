import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Plugin } from 'graphql-yoga';

/** Where the board's files are: `public/status-board/` at the package root, from src/ and dist/ alike. */
const BOARD_DIRECTORY = new URL('../../public/status-board/', import.meta.url);

/** What the board's page may load and talk to: its own script and style, and the gateway. */
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

const readBoardFile = (name: string) => readFileSync(new URL(name, BOARD_DIRECTORY), 'utf8');

/**
 * The board's one operation (`board.graphql`), which its script asks for by id: the gateway adds it
 * to the persisted documents, so that the board works where only persisted documents are accepted.
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

/**
 * The live status board at `GET /status`: a small static page (public/status-board/, plain HTML,
 * CSS and a JavaScript module, served as they are but for the configured pages' slugs written
 * into the page) that renders each page's banner, component tree, incidents and maintenances from
 * the `statusPageChanged` subscription over server-sent events, and so updates itself within
 * seconds of a change in a feed; `/status?slug=` shows that page alone. `slugs` are the configured
 * pages', in configuration order. The files are read once, at start.
 */
export function useStatusBoard({ slugs }: { readonly slugs: readonly string[] }): Plugin {
  // Slugs are lowercase letters, digits and dashes (`STATUS_PAGES_FILE`): nothing to escape.
  const page = boardFile(
    readBoardFile('index.html').replace('content="STATUS_PAGES"', `content="${slugs.join(',')}"`),
    'text/html; charset=utf-8',
    { 'content-security-policy': PAGE_POLICY, 'x-frame-options': 'DENY' },
  );
  const files = new Map([
    ['/status', page],
    ['/status/', page],
    ['/status/board.js', boardFile(readBoardFile('board.js'), 'text/javascript; charset=utf-8')],
    ['/status/board.css', boardFile(readBoardFile('board.css'), 'text/css; charset=utf-8')],
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
