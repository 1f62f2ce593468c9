import { afterAll, beforeAll, vi } from 'vitest';

/** The wall clock of a test file that moves it itself. */
export interface FileClock {
  /** Moves the clock `ms` ahead, at once. */
  advance(ms: number): void;
}

/**
 * `testClock` for a file whose tests share gateways: puts `Date` on a clock the tests move
 * themselves, still otherwise, from before the file's harnesses start (their caches and circuits
 * take the clock they find when they are made) until the file is done. Call it at the top of the
 * file, before the hooks that start the harnesses. Timers, sockets and `performance.now` stay
 * real, so the gateways still serve over loopback.
 */
export function fileClock(): FileClock {
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  // Hooks after the tests run in reverse: this one after the harnesses are closed.
  afterAll(() => {
    vi.useRealTimers();
  });
  return {
    advance(ms) {
      vi.setSystemTime(Date.now() + ms);
    },
  };
}
