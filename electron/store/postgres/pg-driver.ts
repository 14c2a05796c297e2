/**
 * The PostgreSQL driver, loaded when a database is first used: a command on a
 * directory never pays for it (loading it costs more than the rest of the
 * CLI's start-up). It is CommonJS, so it loads synchronously, and through
 * require() rather than import(), which code the compiled CLI takes from its
 * code cache lacks (runtime/import-module.ts). The store, the location
 * detector and LangGraph's PostgreSQL reader all load it here, and so all
 * connect with Waystation's client (pg-client.ts: URL errors a person can act
 * on, the password file read without the driver's warning, no socket left
 * open by a failed login).
 */
import { createRequire } from 'node:module';
import type pg from 'pg';
import { withWaystationClient } from './pg-client.js';

let driver: typeof pg | undefined;

export function loadPgDriver(): typeof pg {
  return (driver ??= withWaystationClient(createRequire(import.meta.url)('pg') as typeof pg));
}
