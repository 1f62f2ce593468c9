import { afterEach, beforeEach, vi } from 'vitest';

/** The wall clock of a test that moves it itself. */
export interface TestClock {
  /** Moves the clock `ms` ahead, at once. */
  advance(ms: number): void;
}

/**
 * Puts `Date` on a clock each test of the suite moves itself, and leaves it still otherwise: what
 * the gateway reads to know a snapshot's age (the snapshot caches, the response cache, the
 * poller's timing, the circuit). Timers, sockets and `performance.now` stay real, so the gateway
 * still serves over loopback; only the time that passes for it is the test's. The clock is in
 * place before each test: start the harness inside the test (the caches take the clock they find
 * when they are made).
 */
export function useTestClock(): TestClock {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  return {
    advance(ms) {
      vi.setSystemTime(Date.now() + ms);
    },
  };
}
