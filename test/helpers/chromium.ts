import { mkdirSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { ensureSystemPackage } from './system-package.js';

/** How long a first launch may take: on a bare machine it installs Chromium (about 100 MB) first. */
export const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** Where tests keep their screenshots (kept by CI as test artifacts; ignored by git). */
export const ARTIFACTS_DIRECTORY = 'test-results';

/**
 * Debian's Chromium, headless, driven by playwright-core; installed first when missing. Nothing it
 * does reaches the network: the flags turn off every background connection.
 */
export async function launchChromium(): Promise<Browser> {
  const executablePath = await ensureSystemPackage({ command: 'chromium', package: 'chromium' });
  mkdirSync(ARTIFACTS_DIRECTORY, { recursive: true });
  return chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
