import type { HarnessOptions } from './harness.js';

/**
 * A gateway that speaks the session API (`VERIFY_API=session`) to a simulator that has it
 * (sourcify-server 3.9.1's session API beside today's APIv2): the setting of every test written
 * for the session API before `VERIFY_API=auto` became the default and the simulator's default
 * server became today's Sourcify, which has no session API.
 */
export const sessionEra = (options: HarnessOptions = {}): HarnessOptions => ({
  ...options,
  env: { VERIFY_API: 'session', ...options.env },
  simulator: { sourcify: null, ...options.simulator },
});
