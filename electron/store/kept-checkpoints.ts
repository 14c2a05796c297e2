/**
 * The hot snapshots a store last opened, kept parsed and checked, by the very
 * bytes they were read from.
 *
 * Opening a task parses and validates its whole `checkpoint.json` (a plan of
 * 1,000 steps is about 460 KB: 3 to 4 ms of decoding and parsing, 2 to 3 ms of
 * zod), and a host showing a running task opens it again after every save. A
 * running task's `checkpoint.json` changes once a segment (version-records.ts),
 * so most of those reads find the same bytes. What parsing and checking give
 * is a function of the bytes alone: a read that finds the bytes it kept (one
 * read of the file, one comparison) takes what it kept, and anything else,
 * however small the change, is parsed and checked anew. No stat, clock or
 * name stands in for the content, so no write is ever missed.
 *
 * What is kept is frozen (a caller cannot change what the next read gets) and
 * bounded: the few tasks a user has open, not a listing's thousands, which do
 * not keep at all (ReadDepth.keep).
 */
import type { CheckpointHead } from '../../shared/checkpoint/checkpoint-head.js';
import { placesSince } from '../../shared/diff/array-lineage.js';
import { walkable } from '../../shared/diff/frozen-arrays.js';
import type { Checked } from './checkpoint-check.js';
import type { KnownVersion, RebuiltVersion, RecordSource } from './version-file.js';

/** Tasks kept at most: a task view, a diff's other side, a task just left. */
export const KEPT_TASKS = 4;
/**
 * Bytes of hot snapshots kept at most; a larger one is read as if nothing were kept. A snapshot is held parsed
 * twice (the document and its validated copy), each several times its bytes: 8 MiB of them, some 50 to 80 MiB of
 * memory, holds the checkpoint of a 10,000-step plan (4.4 MiB) beside smaller ones.
 */
export const KEPT_BYTES = 8 * 1024 * 1024;

type Check<C extends CheckpointHead> = (doc: unknown, file: string) => Checked<C>;

/** A document kept frozen, with each check made of it. */
class CheckedDoc {
  private readonly checks = new Map<Check<CheckpointHead>, Checked<CheckpointHead>>();

  constructor(
    /** Deeply frozen. */
    readonly doc: unknown,
  ) {}

  /** `check(doc, file)`, made once for this document; its checkpoint is frozen. */
  checked<C extends CheckpointHead>(check: Check<C>, file: string): Checked<C> {
    return this.made(check) ?? this.put(check, check(this.doc, file));
  }

  /** What `check` made of the document, if it was made. */
  made<C extends CheckpointHead>(check: Check<C>): Checked<C> | undefined {
    return this.checks.get(check as Check<CheckpointHead>) as Checked<C> | undefined;
  }

  /** Keep `checked` as what `check` makes of the document (found another way, as by checking only what changed). */
  put<C extends CheckpointHead>(check: Check<C>, checked: Checked<C>): Checked<C> {
    freezeDeep(checked.checkpoint);
    this.checks.set(check as Check<CheckpointHead>, checked);
    return checked;
  }
}

/**
 * The newest version a read rebuilt after a kept snapshot (a running task's segment fills after it), kept with the
 * snapshot: the next read of the task starts from it, and applies only the deltas after it. It is taken again only
 * where its record's file still starts with the bytes it was rebuilt from (KnownVersion.source).
 */
export class KeptVersion extends CheckedDoc {
  constructor(
    readonly version: number,
    readonly rebuilt: RebuiltVersion,
    readonly source: RecordSource,
  ) {
    super(rebuilt.doc);
  }

  /** The rebuild's starting point it is. */
  get known(): KnownVersion {
    return { version: this.version, rebuilt: this.rebuilt, source: this.source };
  }
}

/**
 * Bytes of the version file kept with a later version at most (KeptVersion.source): a segment of deltas is tens
 * of kilobytes; one that starts with a full snapshot of a large plan is not kept, and its reads apply the deltas
 * after the hot snapshot, as without a kept version.
 */
export const KEPT_SOURCE_BYTES = 1024 * 1024;

/** One hot snapshot kept: its bytes, the frozen document they parse to, each check made of it, and a later version. */
export class KeptSnapshot extends CheckedDoc {
  private laterVersion: KeptVersion | null = null;

  constructor(
    readonly bytes: Buffer,
    /** JSON.parse of `bytes`, deeply frozen. */
    doc: unknown,
  ) {
    super(doc);
  }

  /** The newest version after this snapshot a read rebuilt, if one was kept. */
  get later(): KeptVersion | null {
    return this.laterVersion;
  }

  /**
   * Keep `rebuilt`, version `version` read from `source`, as the later version in place of any kept before,
   * unless its file's bytes are more than KEPT_SOURCE_BYTES. Its document is frozen here, by what its deltas changed
   * of `previous`, the kept document they were applied to (freezeSince). Null when not kept.
   */
  keepLater(version: number, rebuilt: RebuiltVersion, source: RecordSource, previous: unknown): KeptVersion | null {
    this.laterVersion = null;
    if (source.upTo.length > KEPT_SOURCE_BYTES) return null;
    // The version alone: not the documents each delta made on the way to it, nor the buffer its bytes were read into.
    const { doc, fullBytes, deltaBytes, fullVersion } = rebuilt;
    freezeSince(doc, previous);
    // A copy, as of the hot snapshot's bytes: the bytes read may lie in a larger buffer, or one that is reused.
    const kept = { abs: source.abs, upTo: Buffer.from(source.upTo) };
    this.laterVersion = new KeptVersion(version, { doc, fullBytes, deltaBytes, fullVersion }, kept);
    return this.laterVersion;
  }
}

/** The kept snapshots of one store, by the absolute path of the hot snapshot; see the module comment. */
export class KeptCheckpoints {
  /** In order of use, least recent first. */
  private readonly kept = new Map<string, KeptSnapshot>();
  private bytes = 0;

  constructor(
    private readonly maxTasks = KEPT_TASKS,
    private readonly maxBytes = KEPT_BYTES,
  ) {}

  /** The snapshot kept for `abs` when `bytes` are exactly its bytes; otherwise null (and it is let go). */
  match(abs: string, bytes: Uint8Array): KeptSnapshot | null {
    const found = this.kept.get(abs);
    if (!found) return null;
    this.drop(abs, found);
    if (!found.bytes.equals(bytes)) return null;
    this.kept.set(abs, found);
    this.bytes += found.bytes.length;
    return found;
  }

  /** The snapshot kept for `abs`, if any, not yet compared with the file: see `match`. */
  peek(abs: string): KeptSnapshot | null {
    return this.kept.get(abs) ?? null;
  }

  /**
   * Keep `doc`, parsed from `bytes`, for `abs`: the document is frozen here. Null when the snapshot is too large
   * to keep (the caller then uses `doc` as any read would).
   */
  keep(abs: string, bytes: Buffer, doc: unknown): KeptSnapshot | null {
    const old = this.kept.get(abs);
    if (old) this.drop(abs, old);
    if (bytes.length > this.maxBytes) return null;
    const snapshot = new KeptSnapshot(bytes, freezeDeep(doc));
    this.kept.set(abs, snapshot);
    this.bytes += bytes.length;
    for (const [key, k] of this.kept) {
      if (this.kept.size <= this.maxTasks && this.bytes <= this.maxBytes) break;
      this.drop(key, k);
    }
    return snapshot;
  }

  /** How many snapshots are kept, for tests. */
  get size(): number {
    return this.kept.size;
  }

  private drop(abs: string, k: KeptSnapshot): void {
    this.kept.delete(abs);
    this.bytes -= k.bytes.length;
  }
}

/** Freeze `value` and every object below it. */
export function freezeDeep<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  // Below, then the value itself: V8 walks a frozen array off its fast path (frozen-arrays.ts).
  if (Array.isArray(value)) for (const v of value) freezeDeep(v);
  else for (const k of Object.keys(value)) freezeDeep((value as Record<string, unknown>)[k]);
  return Object.freeze(value);
}

/**
 * Freeze `next`, a document applyDiff made of `previous` (deeply frozen) with the lineage of the arrays it copied
 * recorded, visiting only what the two do not share: what they share is frozen already. A copied array is visited
 * at the places its lineage says changed (array-lineage.ts), any other compared element by element, a pointer
 * each. A version rebuilt from the one before it then costs what its delta changed to freeze, where freezeDeep
 * visits every step of the plan. Without a frozen `previous`, freezeDeep.
 */
export function freezeSince<T>(next: T, previous: unknown): T {
  if (typeof next !== 'object' || next === null || Object.isFrozen(next)) return next;
  const prev = typeof previous === 'object' && previous !== null && Object.isFrozen(previous) ? previous : null;
  if (prev === null) return freezeDeep(next);
  if (Array.isArray(next)) {
    const before = Array.isArray(prev) ? (prev as readonly unknown[]) : null;
    // A lineage is trusted once its copy is frozen (array-lineage.ts): frozen first, then asked.
    const places = before ? placesSince(Object.freeze(next), before) : null;
    if (places !== null) {
      for (const i of places) freezeSince(next[i], before![i]);
    } else {
      const items = walkable(Object.freeze(next));
      for (let i = 0; i < items.length; i++)
        if (!(before && i < before.length && items[i] === before[i])) freezeSince(items[i], before?.[i]);
    }
    return next;
  }
  const o = next as Record<string, unknown>;
  const p = Array.isArray(prev) ? null : (prev as Record<string, unknown>);
  for (const k of Object.keys(o)) if (!(p && o[k] === p[k])) freezeSince(o[k], p?.[k]);
  return Object.freeze(next);
}
