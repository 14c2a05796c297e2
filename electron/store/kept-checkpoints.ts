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
import type { Checked } from './checkpoint-check.js';

/** Tasks kept at most: a task view, a diff's other side, a task just left. */
export const KEPT_TASKS = 4;
/**
 * Bytes of hot snapshots kept at most; a larger one is read as if nothing were kept. A snapshot is held parsed
 * twice (the document and its validated copy), each several times its bytes: 8 MiB of them, some 50 to 80 MiB of
 * memory, holds the checkpoint of a 10,000-step plan (4.4 MiB) beside smaller ones.
 */
export const KEPT_BYTES = 8 * 1024 * 1024;

type Check<C extends CheckpointHead> = (doc: unknown, file: string) => Checked<C>;

/** One hot snapshot kept: its bytes, the frozen document they parse to, and each check made of it. */
export class KeptSnapshot {
  private readonly checks = new Map<Check<CheckpointHead>, Checked<CheckpointHead>>();

  constructor(
    readonly bytes: Buffer,
    /** JSON.parse of `bytes`, deeply frozen. */
    readonly doc: unknown,
  ) {}

  /** `check(doc, file)`, made once for this snapshot; its checkpoint is frozen. */
  checked<C extends CheckpointHead>(check: Check<C>, file: string): Checked<C> {
    const known = this.checks.get(check as Check<CheckpointHead>);
    if (known) return known as Checked<C>;
    const made = check(this.doc, file);
    freezeDeep(made.checkpoint);
    this.checks.set(check as Check<CheckpointHead>, made);
    return made;
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
  Object.freeze(value);
  if (Array.isArray(value)) for (const v of value) freezeDeep(v);
  else for (const k of Object.keys(value)) freezeDeep((value as Record<string, unknown>)[k]);
  return value;
}
