/** A page's own `pollIntervalMs` in STATUS_PAGES_FILE: read, and bounded with its path. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';

const dir = mkdtempSync(join(tmpdir(), 'poll-interval-'));
const VERIFY = { VERIFY_BASE_URL: 'https://verify.example.com/server' };

const fileOf = (name: string, text: string) => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
};

const problemsOf = (file: string): readonly string[] => {
  try {
    loadConfig({ ...VERIFY, STATUS_PAGES_FILE: file });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('pollIntervalMs of a status page', () => {
  it('is read per page, and absent where the page leaves it to STATUS_POLL_INTERVAL_MS', () => {
    const file = fileOf(
      'pages.yaml',
      [
        'pages:',
        '  - { slug: github, baseUrl: "https://www.githubstatus.com/api/v2", pollIntervalMs: 60000 }',
        '  - { slug: claude, baseUrl: "https://status.claude.com/api/v2" }',
      ].join('\n'),
    );
    const { pages, pollIntervalMs } = loadConfig({
      ...VERIFY,
      STATUS_PAGES_FILE: file,
      STATUS_POLL_INTERVAL_MS: '15000',
    }).statusFeed;
    expect(pages.map((page) => page.pollIntervalMs)).toEqual([60_000, undefined]);
    expect(pollIntervalMs).toBe(15_000);
  });

  it('is a whole number of milliseconds from a second to an hour', () => {
    const page = (slug: string, pollIntervalMs: unknown) => ({
      slug,
      baseUrl: `https://${slug}.example.com/api/v2`,
      pollIntervalMs,
    });
    const file = fileOf(
      'bad.json',
      JSON.stringify({
        pages: [
          page('a', 999),
          page('b', 3_600_001),
          page('c', 1_500.5),
          page('d', '60000'),
          page('e', 1_000),
          page('f', 3_600_000),
        ],
      }),
    );
    expect(problemsOf(file)).toEqual([
      'STATUS_PAGES_FILE pages[0].pollIntervalMs must be at least 1000 (a second)',
      'STATUS_PAGES_FILE pages[1].pollIntervalMs must be at most 3600000 (an hour)',
      'STATUS_PAGES_FILE pages[2].pollIntervalMs must be a whole number of milliseconds',
      'STATUS_PAGES_FILE pages[3].pollIntervalMs must be a whole number of milliseconds',
    ]);
  });
});
