import { onTestFinished, vi } from 'vitest';

/** The wall clock of a test that moves it itself. */
export interface TestClock {
  /** Moves the clock `ms` ahead, at once. */
  advance(ms: number): void;
}

/**
 * Puts `Date` on a clock the test moves itself, still otherwise, until the test ends: what the
 * gateway reads to know a snapshot's age (the snapshot caches, the response cache, the poller's
 * timing, the circuit). Timers, sockets and `performance.now` stay real, so the gateway still
 * serves over loopback; only the time that passes for it is the test's. Call it before the harness
 * starts: the caches take the clock they find when they are made.
 */
export function testClock(): TestClock {
  vi.useFakeTimers({ toFake: ['Date'] });
  onTestFinished(() => {
    vi.useRealTimers();
  });
  return {
    advance(ms) {
      vi.setSystemTime(Date.now() + ms);
    },
  };
}
