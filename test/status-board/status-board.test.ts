import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { documentIdOf } from '../../src/persisted-documents/manifest.js';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('GET /status: the files', () => {
  // Static files alone: one gateway for them all.
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  it('serves the board as static files under a strict content security policy', async () => {
    const page = await harness.fetch('/status');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toContain('<script type="module" src="/status/board.js">');

    const script = await harness.fetch('/status/board.js');
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toContain('const DOCUMENT_ID =');
    expect((await harness.fetch('/status/board.css')).headers.get('content-type')).toBe(
      'text/css; charset=utf-8',
    );
    expect((await harness.fetch('/status/other.js')).status).toBe(404);
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
  afterEach(() => harness.close());

  it('asks for its operation by the id of board.graphql, which is persisted even in PERSISTED_DOCUMENTS_ONLY', async () => {
    const script = readFileSync('public/status-board/board.js', 'utf8');
    const document = readFileSync('public/status-board/board.graphql', 'utf8');
    const [, id] = /const DOCUMENT_ID = '(sha256:[0-9a-f]{64})';/.exec(script) ?? [];
    expect(id).toBe(documentIdOf(document));

    harness = await startHarness({ env: { PERSISTED_DOCUMENTS_ONLY: true } });
    const stream = await harness.fetch(`/graphql?documentId=${id}`, {
      headers: { accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    const reader = stream.body?.getReader();
    let received = '';
    // The stream may open with a keep-alive comment before the first event.
    while (reader && !received.includes('event: next')) {
      const { value, done } = await reader.read();
      if (done) break;
      received += new TextDecoder().decode(value);
    }
    await reader?.cancel();
    expect(received).toContain('"statusPageChanged"');
  });

  it('is not served with STATUS_BOARD=false', async () => {
    harness = await startHarness({ env: { STATUS_BOARD: false } });
    expect((await harness.fetch('/status')).status).toBe(404);
  });
});
