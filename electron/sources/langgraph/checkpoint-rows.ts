/**
 * What a LangGraph checkpointer's tables hold, as the readers hand it over:
 * rows with their serde pairs still encoded. The SQLite and PostgreSQL
 * readers both produce these shapes; the mapping decodes them.
 */

/** One stored value: a serde pair, or (PostgreSQL's JSONB columns) JSON already parsed. */
export type StoredValue = { type: string | null; data: Uint8Array | string | null } | { type: 'jsonb'; json: unknown };

/** A thread (with its namespace) and how far it got. */
export interface ThreadRow {
  thread_id: string;
  checkpoint_ns: string;
  /** How many checkpoints the thread has. */
  checkpoints: number;
  /** The newest checkpoint's id (ids sort by time). */
  latest_id: string;
  /** How many pending writes its checkpoints have: an answer to an interrupt is a write to an old checkpoint. */
  writes: number;
}

/** A checkpoint's place in its thread's tree. */
export interface CheckpointRef {
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
}

/** One checkpoint as History lists it: its place in the tree and its metadata, not its state. */
export interface CheckpointLink extends CheckpointRef {
  metadata: StoredValue;
  /** The checkpoint's serde type (`json`, `msgpack`, `msgpack+aes`, ...), so History can flag what cannot be read without decoding it. */
  type: string | null;
  /** Bytes of the stored checkpoint (with its blobs, in PostgreSQL). */
  bytes: number;
  /**
   * The time the checkpoint records of itself (its `ts`), where the database can read it without the
   * checkpoint being decoded here (JSON in SQLite, JSONB in PostgreSQL); null or absent otherwise. LangGraph's last
   * checkpoint of a run keeps the id of the one before it, so the time its id encodes is that one's.
   */
  ts?: string | null;
}

/** A pending write: what a task wrote to a channel after the checkpoint was taken. */
export interface WriteRow {
  task_id: string;
  idx: number;
  channel: string;
  value: StoredValue;
}

/** One checkpoint whole: its state, metadata and the writes recorded against it. */
export interface CheckpointRow extends CheckpointLink {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint: StoredValue;
  /** PostgreSQL: channel values kept in checkpoint_blobs, by channel, at the versions the checkpoint names. */
  blobs?: Record<string, StoredValue>;
  writes: WriteRow[];
}

/** A checkpointer's tables, opened read-only. */
export interface CheckpointRows {
  readonly kind: 'sqlite' | 'postgres';
  /** Where the tables are, with no secret in it (a file path, or a URL without its password). */
  readonly locator: string;
  threads(): Promise<ThreadRow[]>;
  /** A thread's checkpoints, oldest first: their ids and parents only (what numbering them needs). */
  refs(threadId: string, ns: string): Promise<CheckpointRef[]>;
  /** A thread's checkpoints, oldest first, with their metadata and sizes (what History shows). */
  links(threadId: string, ns: string): Promise<CheckpointLink[]>;
  /**
   * One checkpoint whole; with `withoutMessages`, its `messages` channel left
   * out where the store can leave it out cheaply (what a listing reads: the
   * conversation is most of a checkpoint, and no list row shows it).
   */
  checkpoint(threadId: string, ns: string, checkpointId: string, opts?: { withoutMessages?: boolean }): Promise<CheckpointRow | null>;
  /** Something that changes whenever a checkpoint or write is added, cheap to ask for (live updates). */
  changeMark(): Promise<string>;
  close(): Promise<void>;
}
