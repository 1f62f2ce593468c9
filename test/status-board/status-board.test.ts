import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { documentIdOf } from '../../src/persisted-documents/manifest.js';
import type { Harness } from '../helpers/harness.js';
import { startInProcess } from '../helpers/in-process.js';
import { allEnded } from '../helpers/live-subscriptions.js';
import { sharedHarnesses } from '../helpers/shared-harness.js';
import { readSse } from '../helpers/subscriptions.js';

/*
 * One gateway serves every test but two, each of which needs a value of its own: the board's
 * screen size below its most (MAX_PAGES_PER_OPERATION 10, against the default 50 that leaves it at
 * 24), and no board (STATUS_BOARD=false). Those two read a static file or its 404, the listener's
 * alone: each a gateway in process, with no upstream.
 */
const harnesses = sharedHarnesses();
/** The strictest production setting, which the board must work in: the files do not mind it. */
const useDefault = () => harnesses.use({ env: { PERSISTED_DOCUMENTS_ONLY: true } });
afterAll(() => harnesses.close());

describe('GET /status: the files', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await useDefault();
  });

  it('serves the board as static files under a strict content security policy', async () => {
    const page = await harness.fetch('/status');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const policy = page.headers.get('content-security-policy');
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).toContain("img-src 'self'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/status/board.js">');
    expect(html).toContain('<link rel="icon" href="/status/favicon.svg" type="image/svg+xml" />');
    // Nothing inline for the policy to refuse.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)|<style|\son\w+=/);

    for (const module of ['board.js', 'event-stream.js', 'update-body.js']) {
      const script = await harness.fetch(`/status/${module}`);
      expect(script.status).toBe(200);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    }
    expect((await harness.fetch('/status/board.css')).headers.get('content-type')).toBe(
      'text/css; charset=utf-8',
    );
    const icon = await harness.fetch('/status/favicon.svg');
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(icon.headers.get('content-security-policy')).toBe("default-src 'none'");
    expect(await icon.text()).toMatch(/^<svg /);
    expect((await harness.fetch('/status/other.js')).status).toBe(404);
  });

  it('writes in the id of its operations and its screen size, and no list of pages', async () => {
    const html = await (await harness.fetch('/status')).text();
    const document = readFileSync('public/status-board/board.graphql', 'utf8');
    expect(html).toContain(`<meta name="board-document" content="${documentIdOf(document)}" />`);
    expect(html).toContain('<meta name="board-page-size" content="24" />');
    // The pages come from the API on each load: a reloaded STATUS_PAGES_FILE shows on the next.
    expect(html).not.toContain('status-pages');
  });

  it('answers 304 while the file is unchanged', async () => {
    const first = await harness.fetch('/status/board.js');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers.get('cache-control')).toBe('no-cache');
    const again = await harness.fetch('/status/board.js', {
      headers: { 'if-none-match': etag ?? '' },
    });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });
});

describe('GET /status', () => {
  let harness: Harness;

  /** `operationName` of board.graphql, asked for by the id the board's page gives. */
  async function boardOperation(operationName: string, variables: object, accept: string) {
    const html = await (await harness.fetch('/status')).text();
    const [, id = ''] =
      /<meta name="board-document" content="(sha256:[0-9a-f]{64})"/.exec(html) ?? [];
    const params = new URLSearchParams({
      documentId: id,
      operationName,
      variables: JSON.stringify(variables),
    });
    return harness.fetch(`/graphql?${params}`, { headers: { accept } });
  }

  it('asks for its operations by the id of board.graphql, which is persisted even in PERSISTED_DOCUMENTS_ONLY', async () => {
    harness = await useDefault();
    const directory = await boardOperation('BoardDirectory', {}, 'application/json');
    expect(await directory.json()).toEqual({
      data: {
        pages: {
          totalCount: 1,
          pageInfo: { hasNextPage: false, endCursor: expect.any(String) },
          nodes: [{ slug: 'default', tags: [] }],
        },
      },
    });
    const reachability = await boardOperation(
      'BoardReachability',
      { slugs: ['default'] },
      'application/json',
    );
    expect(await reachability.json()).toEqual({
      data: { statusOverview: { complete: true, unreachablePages: [] } },
    });
    const stream = await boardOperation('StatusBoard', { slugs: ['default'] }, 'text/event-stream');
    expect(stream.status).toBe(200);
    const board = readSse(stream);
    // The stream may open with a keep-alive comment before the first event.
    expect((await board.next()).data).toHaveProperty('statusPageChanged');
    await board.close();
    await allEnded(harness);
  });

  it('shows no more pages on a screen than an operation may read', async () => {
    const gateway = startInProcess({ env: { MAX_PAGES_PER_OPERATION: 10 } });
    onTestFinished(() => gateway.close());
    expect((await gateway.request('/status')).text).toContain(
      '<meta name="board-page-size" content="10" />',
    );
  });

  it('is not served with STATUS_BOARD=false', async () => {
    const gateway = startInProcess({ env: { STATUS_BOARD: false } });
    onTestFinished(() => gateway.close());
    expect((await gateway.request('/status')).status).toBe(404);
  });
});
