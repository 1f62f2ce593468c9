import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS build for graphql-yoga and Pothos; Vite would pick its ESM build
    // for our own files. Two copies break `instanceof GraphQLError`, so use Node's choice everywhere.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    // The gateway's tests, then the simulator's own.
    include: ['test/**/*.test.ts', 'simulator/test/**/*.test.ts'],
    // Counts the harness starts of a run and refuses more than its limit.
    globalSetup: ['test/global-setup.ts'],
    // Files share their workers' module state (the built schema, the helpers): each file starts its
    // own gateways, so nothing of one file's runs reaches another's. A fresh worker per file spent a
    // third of the suite importing the gateway again: 314-316 s with it, 176-183 s without (two
    // full runs each, 2026-11-26, 97 files).
    isolate: false,
    // One test file per core and one more: most of a file's time is waiting on sockets, processes
    // and timers, which another file fills. On 2 cores the suite took 302 s with vitest's default
    // of one worker, 199 s with two; then 174 s with two against 150 s with three (2026-11-29,
    // 134 files, all passing; each pair from one commit, run back to back on a quiet machine).
    maxWorkers: availableParallelism() + 1,
    testTimeout: 20_000,
    // Hooks start gateways, Redis, Chromium and processes that load the source through tsx: seconds
    // on a quiet machine, past 20 s on a loaded one (replica tests failed "not ready" there).
    hookTimeout: 90_000,
  },
});
