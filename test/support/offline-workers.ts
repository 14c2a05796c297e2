/**
 * The environment of tests that start real worker processes: workers inherit
 * it, so with no API key they use the offline model, here without its
 * simulated latency.
 */
import { afterAll, beforeAll } from 'vitest';

/**
 * Set that environment for the test file (plus `overrides`; undefined deletes), and restore it after.
 *
 * Call at the top level of the test file.
 */
export function useOfflineWorkers(overrides: Record<string, string | undefined> = {}): void {
  const saved = { ...process.env };
  beforeAll(() => {
    delete process.env.OPENAI_API_KEY;
    process.env.WAYSTATION_OFFLINE_LATENCY_MS = '0';
    for (const [name, value] of Object.entries(overrides)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  afterAll(() => {
    process.env = saved;
  });
}
