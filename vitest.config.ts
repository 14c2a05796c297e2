import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at a time on these two cores: most of a file's time is spent waiting on child processes,
    // fsync and a database, and vitest's default (one worker less than the cores) runs them one by one.
    maxWorkers: 2,
    setupFiles: ['./test/support/provide-built-in-agents.ts', './test/support/trust-store-env.ts'],
    // Names the shared PostgreSQL test cluster's folder; the first test that needs a server starts it.
    globalSetup: ['./test/support/postgres-global-setup.ts'],
    reporters: ['default', './test/support/closing-line-reporter.ts'],
  },
});
