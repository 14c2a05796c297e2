/**
 * The checks of a directory's version files (CheckpointSource.fileProblems)
 * on a worker thread of their own.
 *
 * A listing of 10,000 tasks asks about 100,000 version files: a readdir of
 * each task's `versions/`, a stat of each file and the head of the newest
 * (task-reader.ts, listedFileProblems), some 600 ms of system calls that the
 * listing's own thread, reading and parsing every `checkpoint.json`, would
 * otherwise wait for. On a thread they run beside it, on another core; only
 * the few fields a check needs of each task cross over, and its problems come
 * back.
 */
import type { Worker } from 'node:worker_threads';
import type { Problem } from '../../shared/checkpoint/problem.js';
import type { ListedFiles } from './store-types.js';
import { startThread } from './start-thread.js';

/** What the thread is started with: the store it opens on its side. */
export interface FileCheckThreadData {
  root: string;
  maxFileBytes: number;
}

/** A question to the thread, and its answer. */
export type FileCheckRequest = { id: number; entries: ListedFiles[] };
export type FileCheckReply = { id: number; problems: Problem[][] } | { id: number; error: string };

/** Only what listedFileProblems reads of an entry: a listed task's parsed checkpoint stays on this side. */
function filesOnly(e: ListedFiles): ListedFiles {
  return {
    task_id: e.task_id,
    location: e.location,
    format: e.format,
    problems: e.problems.map((p) => ({ file: p.file, reason: p.reason, message: p.message, severity: p.severity })),
    checkpoint: e.checkpoint ? { version: e.checkpoint.version } : null,
  };
}

/**
 * The file checks of one directory on a thread, started at the first
 * question and ended once none has come for `idleMs` (the host asks once per
 * open directory, and a thread would otherwise hold a store and its caches for
 * as long as the directory stays open); the next question starts another. A
 * thread that fails (it could not start, or died) answers every question with
 * that error, and the store then checks on its own thread instead; the thread
 * keeps the process alive only while a question is out.
 */
export class FileCheckThread {
  private worker: Worker | null = null;
  private failed: Error | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (p: Problem[][]) => void; reject: (err: Error) => void }>();
  private idle: NodeJS.Timeout | null = null;

  constructor(
    private readonly data: FileCheckThreadData,
    private readonly idleMs = 5_000,
  ) {}

  /** Whether a thread is up now (it is started by a question and ended when idle). */
  get running(): boolean {
    return this.worker !== null;
  }

  check(entries: readonly ListedFiles[]): Promise<Problem[][]> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    let worker: Worker;
    try {
      worker = this.started();
    } catch (err) {
      // A thread that cannot even be asked for is a failed one: the store checks on its own thread.
      this.fail(err instanceof Error ? err : new Error(String(err)));
      return Promise.reject(this.failed);
    }
    const id = this.nextId++;
    return new Promise<Problem[][]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Held while a question is out, so the answer is waited for; let go once none is.
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, entries: entries.map(filesOnly) } satisfies FileCheckRequest);
    });
  }

  async close(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    const worker = this.worker;
    this.worker = null;
    this.fail(new Error('the store was closed before its file checks were answered'));
    await worker?.terminate();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = startThread(import.meta.url, 'file-check-worker', this.data);
    worker.unref();
    worker.on('message', (reply: FileCheckReply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) {
        worker.unref();
        this.idle = setTimeout(() => this.retire(worker), this.idleMs).unref();
      }
      if ('error' in reply) waiting.reject(new Error(reply.error));
      else waiting.resolve(reply.problems);
    });
    // Only the thread in use fails the checks: one ended for being idle exits as asked.
    worker.on('error', (err) => this.worker === worker && this.fail(err));
    worker.on('exit', (code) => this.worker === worker && this.fail(new Error(`the file-check thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  /** End an idle thread; the next question starts another. */
  private retire(worker: Worker): void {
    if (this.worker !== worker || this.pending.size > 0) return;
    this.worker = null;
    this.idle = null;
    void worker.terminate();
  }

  /** Every question out, and every later one, answered with `err`. */
  private fail(err: Error): void {
    this.failed ??= err;
    for (const { reject } of this.pending.values()) reject(err);
    this.pending.clear();
  }
}
