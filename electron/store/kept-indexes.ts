/**
 * The history indexes a store read last, kept decoded (history-index.ts,
 * DecodedIndex): a host showing a running task reads its new messages after
 * every save, and the index, appended to as segments close, was decoded whole
 * at each of those reads. A read that finds the index going on from the bytes
 * kept decodes only the lines added; anything else (the index rewritten,
 * truncated, replaced) is decoded anew. The index only says where to look:
 * each chunk it places is used only when its bytes hash to the chunk's name,
 * so what is kept can cost a read speed, never give it a wrong answer.
 */
import { DecodedIndex } from './history-index.js';

/** Tasks whose index is kept at most: as many as the hot snapshots a store keeps (kept-checkpoints.ts). */
export const KEPT_INDEXES = 4;

/** The decoded indexes of one store, by the index file's absolute path, least recently read first. */
export class KeptIndexes {
  private readonly kept = new Map<string, DecodedIndex>();

  constructor(private readonly max = KEPT_INDEXES) {}

  /** The index at `abs`, whose bytes are now `bytes`, decoded: the kept one extended where the bytes go on from it. */
  decoded(abs: string, bytes: Buffer): DecodedIndex {
    const found = this.kept.get(abs);
    this.kept.delete(abs);
    const index = found?.continuedBy(bytes) ? found.extend(bytes) : new DecodedIndex().extend(bytes);
    this.kept.set(abs, index);
    if (this.kept.size > this.max) this.kept.delete(this.kept.keys().next().value as string);
    return index;
  }

  /** How many indexes are kept, for tests. */
  get size(): number {
    return this.kept.size;
  }
}
