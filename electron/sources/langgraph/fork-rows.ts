/**
 * The rows of a fork (see fork-writer.ts), as each LangGraph checkpointer
 * writes a checkpoint:
 *
 *   - JavaScript SqliteSaver: `checkpoints` (type `json`, the checkpoint and
 *     its metadata as JSON text);
 *   - Python SqliteSaver: `checkpoints` (type `msgpack`, the checkpoint as
 *     JsonPlusSerializer's msgpack, metadata as JSON text);
 *   - JavaScript PostgresSaver: `checkpoints` (the checkpoint as JSONB
 *     without `channel_values`, metadata as JSONB) and one `checkpoint_blobs`
 *     row (type `json`) per changed channel at its new version;
 *   - Python PostgresSaver: the same, with `None`, strings, numbers and
 *     booleans kept inline in the JSONB's `channel_values` and every other
 *     value a `msgpack` blob.
 */
import { encode } from '@msgpack/msgpack';
import { ServiceError } from '../../../shared/api/error-codes.js';
import { newCheckpointId } from './checkpoint-id.js';
import type { CheckpointRow } from './checkpoint-rows.js';
import { isPlainObject } from './inert-value.js';
import { decodeMsgpack } from './msgpack-serde.js';
import { joinEntries, mapEntries, type RawEntry } from './msgpack-splice.js';
import { encodePythonValue } from './python-state-encoding.js';
import { encodeValue } from './state-encoding.js';

/** Raised when a fork cannot be made; nothing was written. */
export class ForkRefused extends ServiceError {
  readonly code = 'read-only' as const;
}

export type ForkRows =
  | { kind: 'sqlite'; type: 'json' | 'msgpack'; checkpoint: Uint8Array; metadata: string }
  | {
      kind: 'postgres';
      checkpoint: Record<string, unknown>;
      metadata: Record<string, unknown>;
      blobs: { channel: string; version: string; type: string; blob: Uint8Array }[];
    };

/** What a builder is given: the fork asked for. */
export interface ForkRequest {
  thread_id: string;
  checkpoint_ns: string;
  parentId: string;
  values: Record<string, unknown>;
  names: string[];
  /** The thread's newest checkpoint id: the new one sorts after it. */
  newest: string;
}

export interface BuiltFork {
  checkpoint_id: string;
  step: number;
  channels: { name: string; from: unknown; to: unknown }[];
  rows: ForkRows;
}

/** The next version after every one of `versions` (and, for a database, the thread's stored ones). */
type Bump = (versions: Record<string, unknown>) => unknown;

const textOf = (data: Uint8Array | string | null): string =>
  typeof data === 'string' ? data : new TextDecoder().decode(data ?? new Uint8Array());

const bytesOf = (data: Uint8Array | string | null): Uint8Array =>
  typeof data === 'string' ? new TextEncoder().encode(data) : (data ?? new Uint8Array());

/** The stored value's own data (a SQLite column) or, for JSONB, the parsed JSON. */
function parsedJson(value: CheckpointRow['checkpoint'], what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed =
      value.type === 'jsonb' ? (value as { json: unknown }).json : JSON.parse(textOf((value as { data: Uint8Array | string | null }).data));
  } catch (err) {
    throw new ForkRefused(`the ${what} cannot be read as JSON (${err instanceof Error ? err.message : String(err)}); nothing was written`);
  }
  if (!isPlainObject(parsed)) throw new ForkRefused(`the ${what} is not a JSON object; nothing was written`);
  return parsed;
}

/** The metadata updateState writes: source update, the parent's step + 1, the parent's parents. */
function updateMetadata(row: CheckpointRow) {
  const parent = parsedJson(row.metadata, `metadata of checkpoint ${row.checkpoint_id}`);
  const step = (typeof parent.step === 'number' ? parent.step : -1) + 1;
  return { step, metadata: { source: 'update', step, parents: isPlainObject(parent.parents) ? parent.parents : {} } };
}

/** The versions after the fork: every changed channel at one new version. */
function bumpVersions(versions: Record<string, unknown>, names: readonly string[], bump: Bump) {
  const to = bump(versions);
  const next = { ...versions };
  const channels = names.map((name) => ({ name, from: versions[name] ?? null, to }));
  for (const name of names) next[name] = to;
  return { next, channels };
}

/** JavaScript's SqliteSaver: the parent's JSON with the channels, versions, id and time replaced. */
export function jsonSqliteRow(row: CheckpointRow, fork: ForkRequest, bump: Bump): BuiltFork {
  const doc = parsedJson(row.checkpoint, `checkpoint ${row.checkpoint_id}`);
  const { step, metadata } = updateMetadata(row);
  const channelValues = isPlainObject(doc.channel_values) ? { ...doc.channel_values } : {};
  for (const name of fork.names) channelValues[name] = encodeValue(fork.values[name], name);
  const { next, channels } = bumpVersions(isPlainObject(doc.channel_versions) ? doc.channel_versions : {}, fork.names, bump);
  const id = newCheckpointId(step, fork.newest);
  const newDoc = { ...doc, id, ts: new Date().toISOString(), channel_values: channelValues, channel_versions: next };
  return {
    checkpoint_id: id,
    step,
    channels,
    rows: {
      kind: 'sqlite',
      type: 'json',
      checkpoint: new TextEncoder().encode(JSON.stringify(newDoc)),
      metadata: JSON.stringify(metadata),
    },
  };
}

/** Python's time of a checkpoint: `datetime.now(timezone.utc).isoformat()`, microseconds and `+00:00`. */
const pythonNow = () => new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');

const entry = (key: string, valueBytes: Uint8Array): RawEntry => ({ key, keyBytes: encode(key), valueBytes });

/** Replace (or add, at the end) the entries named in `values`, every other entry's bytes kept. */
function spliced(entries: RawEntry[], values: Record<string, Uint8Array>): Uint8Array {
  const out = entries.map((e) => (e.key !== null && e.key in values ? { ...e, valueBytes: values[e.key] } : e));
  for (const [key, bytes] of Object.entries(values)) if (!entries.some((e) => e.key === key)) out.push(entry(key, bytes));
  return joinEntries(out);
}

/** Python's SqliteSaver: the parent's msgpack with the changed entries replaced, every other byte as Python wrote it. */
export function pythonSqliteRow(row: CheckpointRow, fork: ForkRequest, bump: Bump): BuiltFork {
  const data = bytesOf((row.checkpoint as { data: Uint8Array | string | null }).data);
  let top: RawEntry[];
  let versions: Record<string, unknown>;
  let channelEntries: RawEntry[];
  try {
    top = mapEntries(data);
    const cv = top.find((e) => e.key === 'channel_values');
    channelEntries = cv ? mapEntries(cv.valueBytes) : [];
    const decoded = decodeMsgpack(top.find((e) => e.key === 'channel_versions')?.valueBytes ?? encode({}));
    versions = isPlainObject(decoded) ? decoded : {};
  } catch (err) {
    throw new ForkRefused(
      `checkpoint ${row.checkpoint_id} is not the msgpack map Python's serializer writes (${err instanceof Error ? err.message : String(err)}); nothing was written`,
    );
  }
  const { step, metadata } = updateMetadata(row);
  const { next, channels } = bumpVersions(versions, fork.names, bump);
  const newValues = Object.fromEntries(fork.names.map((name) => [name, encodePythonValue(fork.values[name], name)]));
  const id = newCheckpointId(step, fork.newest);
  const replaced: Record<string, Uint8Array> = {
    id: encode(id),
    ts: encode(pythonNow()),
    channel_values: spliced(channelEntries, newValues),
    channel_versions: encode(next),
  };
  // Newer checkpoints list the channels the step updated: here, the edited ones.
  if (top.some((e) => e.key === 'updated_channels')) replaced.updated_channels = encode(fork.names);
  return {
    checkpoint_id: id,
    step,
    channels,
    rows: { kind: 'sqlite', type: 'msgpack', checkpoint: spliced(top, replaced), metadata: JSON.stringify(metadata) },
  };
}

/** JavaScript's PostgresSaver: JSONB without channel values; each changed channel a `json` blob at its new version. */
export function jsonPostgresRows(row: CheckpointRow, fork: ForkRequest, bump: Bump): BuiltFork {
  const doc = parsedJson(row.checkpoint, `checkpoint ${row.checkpoint_id}`);
  const { step, metadata } = updateMetadata(row);
  const { next, channels } = bumpVersions(isPlainObject(doc.channel_versions) ? doc.channel_versions : {}, fork.names, bump);
  const id = newCheckpointId(step, fork.newest);
  const { channel_values: _values, ...rest } = doc;
  const blobs = fork.names.map((name) => ({
    channel: name,
    version: String(next[name]),
    type: 'json',
    blob: new TextEncoder().encode(JSON.stringify(encodeValue(fork.values[name], name))),
  }));
  return {
    checkpoint_id: id,
    step,
    channels,
    rows: { kind: 'postgres', checkpoint: { ...rest, id, ts: new Date().toISOString(), channel_versions: next }, metadata, blobs },
  };
}

const isPrimitive = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** Python's PostgresSaver: primitives inline in the JSONB's channel_values, every other changed value a `msgpack` blob. */
export function pythonPostgresRows(row: CheckpointRow, fork: ForkRequest, bump: Bump): BuiltFork {
  const doc = parsedJson(row.checkpoint, `checkpoint ${row.checkpoint_id}`);
  const { step, metadata } = updateMetadata(row);
  const { next, channels } = bumpVersions(isPlainObject(doc.channel_versions) ? doc.channel_versions : {}, fork.names, bump);
  const id = newCheckpointId(step, fork.newest);
  const inline = isPlainObject(doc.channel_values) ? { ...doc.channel_values } : {};
  const blobs: Extract<ForkRows, { kind: 'postgres' }>['blobs'] = [];
  for (const name of fork.names) {
    const value = fork.values[name];
    if (isPrimitive(value)) inline[name] = value;
    else {
      delete inline[name];
      blobs.push({ channel: name, version: String(next[name]), type: 'msgpack', blob: encodePythonValue(value, name) });
    }
  }
  const newDoc: Record<string, unknown> = { ...doc, id, ts: pythonNow(), channel_values: inline, channel_versions: next };
  if ('updated_channels' in doc) newDoc.updated_channels = fork.names;
  return { checkpoint_id: id, step, channels, rows: { kind: 'postgres', checkpoint: newDoc, metadata, blobs } };
}
