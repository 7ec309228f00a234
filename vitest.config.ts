import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 900_000,
    // Suites start real servers (gateway, simulator, Redis, an API server); forks keep them apart.
    pool: 'forks',
    reporters: ['default'],
  },
});
