/**
 * Version files: `versions/00000001.json`, each a full snapshot or a delta
 * against the version before it, and the rebuilding of any version from them.
 */
import path from 'node:path';
import { applyDiff, DiffApplyError, type DiffOp } from '../../shared/diff/json-diff.js';
import { problem, type Problem } from '../../shared/checkpoint/problem.js';
import { readJsonFile, relPath, type ReadContext } from './file-reader.js';

export const VERSIONS_DIR = 'versions';
const NAME = /^(\d{8})\.json$/;

/** `00000042.json` for version 42. */
export function versionFileName(version: number): string {
  return `${String(version).padStart(8, '0')}.json`;
}

/** The version number of a version file name, or null for anything else (temp files included). */
export function parseVersionFileName(name: string): number | null {
  const m = NAME.exec(name);
  if (!m) return null;
  const n = Number(m[1]);
  return n > 0 ? n : null;
}

export function versionPath(taskDir: string, version: number): string {
  return path.join(taskDir, VERSIONS_DIR, versionFileName(version));
}

export type Envelope =
  | { format: 'waystation-version'; version: number; kind: 'full'; checkpoint: unknown }
  | { format: 'waystation-version'; version: number; kind: 'delta'; base: number; ops: DiffOp[] };

/**
 * A full envelope around already-serialised checkpoint JSON (its UTF-8 bytes).
 *
 * Built by concatenation so the checkpoint is serialised once per save, and
 * with `kind` among the first bytes so a reader can tell full from delta by
 * the file's head.
 */
export function encodeFull(version: number, checkpointJson: Uint8Array): Buffer {
  return Buffer.concat([fullHead(version), checkpointJson, FULL_TAIL]);
}

/** Bytes of the full envelope of `version` around a checkpoint of `checkpointBytes` bytes, without building it. */
export function fullEnvelopeBytes(version: number, checkpointBytes: number): number {
  return fullHead(version).length + checkpointBytes + FULL_TAIL.length;
}

function fullHead(version: number): Buffer {
  return Buffer.from(`{"format":"waystation-version","version":${version},"kind":"full","checkpoint":`);
}

const FULL_TAIL = Buffer.from('}');

/**
 * A delta envelope. The ops' `old` values are dropped: the base version holds
 * them, and a UI diffing two versions computes them afresh.
 */
export function encodeDelta(version: number, ops: readonly DiffOp[]): string {
  const slim = ops.map((o) => (o.op === 'remove' ? { op: o.op, path: o.path } : { op: o.op, path: o.path, value: o.value }));
  return `{"format":"waystation-version","version":${version},"kind":"delta","base":${version - 1},"ops":${JSON.stringify(slim)}}`;
}

/** Check that parsed JSON is the envelope of `version`. */
export function decodeEnvelope(doc: unknown, version: number, file: string): { ok: true; envelope: Envelope } | { ok: false; problem: Problem } {
  const bad = (what: string) => ({ ok: false as const, problem: problem(file, 'schema', `not a version envelope: ${what}`) });
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return bad('expected a JSON object');
  const e = doc as Record<string, unknown>;
  if (e.format !== 'waystation-version') return bad(`format: expected "waystation-version", got ${JSON.stringify(e.format)}`);
  if (e.version !== version) {
    return { ok: false, problem: problem(file, 'invariant', `the file is named for version ${version} but holds version ${JSON.stringify(e.version)}`) };
  }
  if (e.kind === 'full') {
    if (typeof e.checkpoint !== 'object' || e.checkpoint === null) return bad('checkpoint: expected an object');
    return { ok: true, envelope: e as Envelope };
  }
  if (e.kind === 'delta') {
    if (e.base !== version - 1) return bad(`base: expected ${version - 1}, got ${JSON.stringify(e.base)}`);
    if (!Array.isArray(e.ops)) return bad('ops: expected an array');
    return { ok: true, envelope: e as Envelope };
  }
  return bad(`kind: expected "full" or "delta", got ${JSON.stringify(e.kind)}`);
}

export interface RebuiltVersion {
  /** The checkpoint JSON of the version, before migration and validation. */
  doc: unknown;
  /** Bytes of the full snapshot the rebuild started from. */
  fullBytes: number;
  /** Bytes of the deltas after that snapshot, up to and including this version. */
  deltaBytes: number;
  /** The version number of that full snapshot. */
  fullVersion: number;
}

/**
 * Rebuild version `version` of the task in `taskDir`: walk back to the
 * nearest full snapshot, then apply the deltas forward.
 *
 * Never throws on bad files; returns the problems that stopped the rebuild.
 */
export async function rebuildVersion(
  ctx: ReadContext,
  taskDir: string,
  version: number,
): Promise<{ ok: true; value: RebuiltVersion } | { ok: false; problems: Problem[]; missing: boolean }> {
  const deltas: { version: number; ops: DiffOp[] }[] = [];
  let deltaBytes = 0;
  for (let v = version; v >= 1; v--) {
    const abs = versionPath(taskDir, v);
    const read = await readJsonFile(ctx, abs);
    if (!read.ok) {
      if (read.missing) {
        const p = problem(relPath(ctx, abs), 'missing-version', v === version ? `version ${v} does not exist` : `version ${v} is missing, so version ${version} cannot be rebuilt`);
        return { ok: false, problems: [p], missing: v === version };
      }
      return { ok: false, problems: [read.problem], missing: false };
    }
    const env = decodeEnvelope(read.value, v, relPath(ctx, abs));
    if (!env.ok) return { ok: false, problems: [env.problem], missing: false };
    if (env.envelope.kind === 'full') {
      let doc = env.envelope.checkpoint;
      for (let i = deltas.length - 1; i >= 0; i--) {
        try {
          doc = applyDiff(doc, deltas[i].ops);
        } catch (err) {
          const file = relPath(ctx, versionPath(taskDir, deltas[i].version));
          const why = err instanceof DiffApplyError ? err.message : String(err);
          return { ok: false, problems: [problem(file, 'invariant', `the delta does not fit version ${deltas[i].version - 1}: ${why}`)], missing: false };
        }
      }
      return { ok: true, value: { doc, fullBytes: read.bytes, deltaBytes, fullVersion: v } };
    }
    deltas.push({ version: v, ops: env.envelope.ops });
    deltaBytes += read.bytes;
  }
  return { ok: false, problems: [problem(relPath(ctx, versionPath(taskDir, 1)), 'invariant', 'version 1 is not a full snapshot')], missing: false };
}
