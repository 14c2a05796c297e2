/**
 * The PostgreSQL driver, loaded when a database is first used: a command on a
 * directory never pays for it (loading it costs more than the rest of the
 * CLI's start-up). It is CommonJS, so it loads synchronously, and through
 * require() rather than import(), which code the compiled CLI takes from its
 * code cache lacks (runtime/import-module.ts). The store, the location
 * detector and LangGraph's PostgreSQL reader all load it here.
 */
import { createRequire } from 'node:module';
import type pg from 'pg';

export function loadPgDriver(): typeof pg {
  return createRequire(import.meta.url)('pg') as typeof pg;
}
