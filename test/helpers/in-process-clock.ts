import { afterAll, beforeAll, vi } from 'vitest';
import type { TestClock } from './clock.js';

/**
 * `testClock` for a whole file: `Date` on a clock the tests move themselves, still otherwise, from
 * before the file's harness starts (its caches take the clock they find when they are made) until
 * the file ends. Call it in the file's top scope or describe, before the hook that starts the
 * harness. The clock only goes forward, so a test that moves it leaves every snapshot read before it
 * older: each test reads pages of its own (`withOwnPages`).
 */
export function fileClock(): TestClock {
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterAll(() => {
    vi.useRealTimers();
  });
  return {
    advance(ms) {
      vi.setSystemTime(Date.now() + ms);
    },
  };
}
