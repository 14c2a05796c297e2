import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    setupFiles: ['./test/support/provide-built-in-agents.ts', './test/support/trust-store-env.ts'],
    // Names the shared PostgreSQL test cluster's folder; the first test that needs a server starts it.
    globalSetup: ['./test/support/postgres-global-setup.ts'],
    reporters: ['default', './test/support/closing-line-reporter.ts'],
  },
});
