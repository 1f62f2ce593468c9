import { afterAll, beforeAll, onTestFinished, vi } from 'vitest';

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
  return MOVED_BY_HAND;
}

/**
 * `testClock` for a whole file whose tests share gateways: from before the file's harnesses start
 * (their caches and circuits take the clock they find when they are made) until the file is done.
 * Call it at the top of the file or describe, before the hooks that start the harnesses. The clock
 * only goes forward, so a test that moves it leaves every snapshot read before it older: each test
 * reads pages of its own (`withOwnPages`).
 */
export function fileClock(): TestClock {
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  // Hooks after the tests run in reverse: this one after the harnesses are closed.
  afterAll(() => {
    vi.useRealTimers();
  });
  return MOVED_BY_HAND;
}

const MOVED_BY_HAND: TestClock = {
  advance(ms) {
    vi.setSystemTime(Date.now() + ms);
  },
};
