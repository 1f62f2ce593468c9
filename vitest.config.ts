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
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
