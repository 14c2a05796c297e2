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
import { plainProblem, type Problem } from '../../shared/checkpoint/problem.js';
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
    problems: e.problems.map(plainProblem),
    checkpoint: e.checkpoint ? { version: e.checkpoint.version } : null,
  };
}

/** A question asked and not answered yet. */
export interface FileCheckQuestion {
  entries: readonly ListedFiles[];
  resolve: (problems: Problem[][]) => void;
  reject: (err: Error) => void;
}

/**
 * Questions handed to the thread at a time; the rest wait on this side, where
 * `takeBack` can still give them to another thread. Two, so the thread finds
 * the next question the moment it answers one.
 */
const IN_FLIGHT = 2;

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
  /** Posted to the thread, by request id. */
  private readonly posted = new Map<number, FileCheckQuestion>();
  /** Not posted yet, oldest first. */
  private readonly queued: FileCheckQuestion[] = [];
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
    return new Promise<Problem[][]>((resolve, reject) => {
      // Held while a question is out, so the answer is waited for; let go once none is.
      if (this.outstanding === 0) worker.ref();
      this.queued.push({ entries, resolve, reject });
      this.post(worker);
    });
  }

  /**
   * The newest question not handed to the thread yet, taken back for the
   * caller to answer on its own thread (null when every question is out):
   * the two threads then work through the backlog from both ends.
   */
  takeBack(): FileCheckQuestion | null {
    const question = this.queued.pop() ?? null;
    if (question && this.worker) this.settled(this.worker);
    return question;
  }

  async close(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    const worker = this.worker;
    this.worker = null;
    this.fail(new Error('the store was closed before its file checks were answered'));
    await worker?.terminate();
  }

  private get outstanding(): number {
    return this.posted.size + this.queued.length;
  }

  /** Hand queued questions to the thread, oldest first, up to IN_FLIGHT at a time. */
  private post(worker: Worker): void {
    while (this.posted.size < IN_FLIGHT && this.queued.length > 0) {
      const question = this.queued.shift() as FileCheckQuestion;
      const id = this.nextId++;
      this.posted.set(id, question);
      worker.postMessage({ id, entries: question.entries.map(filesOnly) } satisfies FileCheckRequest);
    }
  }

  /** Once nothing is out, the process is no longer held for the thread, and the thread ends if no question follows. */
  private settled(worker: Worker): void {
    if (this.outstanding > 0) return;
    worker.unref();
    this.idle = setTimeout(() => this.retire(worker), this.idleMs).unref();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = startThread(import.meta.url, 'file-check-worker', this.data);
    worker.unref();
    worker.on('message', (reply: FileCheckReply) => {
      const waiting = this.posted.get(reply.id);
      if (!waiting) return;
      this.posted.delete(reply.id);
      this.post(worker);
      this.settled(worker);
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
    if (this.worker !== worker || this.outstanding > 0) return;
    this.worker = null;
    this.idle = null;
    void worker.terminate();
  }

  /** Every question out, and every later one, answered with `err`. */
  private fail(err: Error): void {
    this.failed ??= err;
    for (const { reject } of [...this.posted.values(), ...this.queued]) reject(err);
    this.posted.clear();
    this.queued.length = 0;
  }
}
