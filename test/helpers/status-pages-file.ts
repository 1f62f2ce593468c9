import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A page as `STATUS_PAGES_FILE` lists it (see `src/config.ts`). */
export interface PageEntry {
  readonly slug: string;
  readonly baseUrl: string;
  readonly name?: string;
  readonly chains?: readonly { chainId: string | number; components: readonly string[] }[];
  readonly versionPattern?: string;
  readonly pollIntervalMs?: number;
}

let dir: string | undefined;
let written = 0;

/** Writes a `STATUS_PAGES_FILE` (JSON) of `pages` and returns its path; removed at exit. */
export function statusPagesFile(pages: readonly PageEntry[]): string {
  if (!dir) {
    const created = mkdtempSync(join(tmpdir(), 'status-pages-'));
    dir = created;
    process.once('exit', () => rmSync(created, { recursive: true, force: true }));
  }
  written += 1;
  const file = join(dir, `pages-${written}.json`);
  writeFileSync(file, JSON.stringify({ pages }));
  return file;
}
