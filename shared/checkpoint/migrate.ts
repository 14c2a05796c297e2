/**
 * Forward migration of checkpoint files through an explicit chain.
 *
 * Each step takes a plain object of schema version N and returns version N+1.
 * Migration runs on the parsed JSON before validation, and only in memory: a
 * migrated file is rewritten only when the runtime saves a new version.
 */
import { CURRENT_SCHEMA_VERSION } from './schema.js';

type Json = Record<string, unknown>;

/**
 * Version 1 kept the recovery mode at the top level (`mode`) with an optional
 * `pending_approval` beside it and had no task `status`; version 2 groups them
 * under `recovery` and records `status` explicitly.
 */
function v1ToV2(doc: Json): Json {
  const { mode, pending_approval, ...rest } = doc;
  const plan = Array.isArray(rest.plan) ? (rest.plan as Json[]) : [];
  const status =
    pending_approval != null
      ? 'waiting_approval'
      : plan.some((s) => s?.status === 'failed')
        ? 'failed'
        : plan.length > 0 && plan.every((s) => s?.status === 'done' || s?.status === 'skipped')
          ? 'done'
          : 'running';
  return {
    ...rest,
    schema_version: 2,
    status: rest.status ?? status,
    recovery: rest.recovery ?? { mode: mode ?? 'manual', pending_approval: pending_approval ?? null, decisions: [], auto_attempts: 0 },
  };
}

/**
 * Version 3 lets a blob reference name the version file that carries the
 * blob (`sha256:<hex>@<n>`). Every version 2 reference is a valid version 3
 * one, so nothing moves; the number marks files an older build cannot read.
 */
function v2ToV3(doc: Json): Json {
  return { ...doc, schema_version: 3 };
}

/** migrations[n] upgrades schema version n to n+1. */
const migrations: Record<number, (doc: Json) => Json> = { 1: v1ToV2, 2: v2ToV3 };

export type MigrationResult = { ok: true; doc: Json; from: number } | { ok: false; reason: 'future-schema' | 'schema'; message: string };

/** Bring a parsed checkpoint object up to CURRENT_SCHEMA_VERSION. */
export function migrateForward(doc: Json): MigrationResult {
  const from = doc.schema_version;
  if (typeof from !== 'number' || !Number.isInteger(from) || from < 1) {
    return { ok: false, reason: 'schema', message: `schema_version must be a positive integer, got ${JSON.stringify(from)}` };
  }
  if (from > CURRENT_SCHEMA_VERSION) {
    return {
      ok: false,
      reason: 'future-schema',
      message: `written by a newer Waystation (schema ${from}; this build knows up to ${CURRENT_SCHEMA_VERSION}): shown read-only and never rewritten`,
    };
  }
  let current = doc;
  for (let v = from; v < CURRENT_SCHEMA_VERSION; v++) {
    const step = migrations[v];
    if (!step) return { ok: false, reason: 'schema', message: `no migration from schema ${v} to ${v + 1}` };
    current = step(current);
  }
  return { ok: true, doc: current, from };
}
