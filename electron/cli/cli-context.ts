/**
 * What every `waystation` command is handed: where to write, how to style it,
 * how to open a directory's store, and how to say how the run went.
 *
 * Commands never call process.exit or write to process.stdout themselves, so
 * the whole CLI runs in-process in tests and inside other tools.
 */
import * as fsp from 'node:fs/promises';
import path from 'node:path';
import type { CheckpointSource, CheckpointStore, TaskEntry } from '../store/store-types.js';
import { detectLangGraph, openLangGraphSource } from '../sources/langgraph/open-langgraph.js';
import { createStyle, type Style } from './style.js';

/** Exit codes, the same for every command (listed in `waystation --help`). */
export const ExitCode = {
  /** Done, nothing wrong found. */
  ok: 0,
  /** The command ran and found problems: unreadable tasks, drift, a gap in history. */
  problems: 1,
  /** The command line is wrong: unknown command or task, bad version, missing directory. */
  usage: 2,
} as const;

/** A mistake in the command line: reported with exit code 2 and no stack trace. */
export class UsageError extends Error {}

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Colour stdout (a TTY, no NO_COLOR). */
  color: boolean;
  /** Colour stderr. Defaults to `color`. */
  errColor?: boolean;
}

export interface CliContext {
  readonly io: CliIo;
  /** Styling for stdout. */
  readonly style: Style;
  /** Styling for stderr. */
  readonly errStyle: Style;
  openStore(root: string): CheckpointStore;
  /** Run `fn` when the command has finished (a database connection to close). */
  atExit(fn: () => Promise<void>): void;
  /** Run what atExit collected; the CLI calls it once the command is done. */
  runExits(): Promise<void>;
  /** Raise the exit code of this run; it never goes down (problems are not forgotten by a later success). */
  fail(code: number): void;
  readonly exitCode: number;
}

export function createContext(io: CliIo, openStore: (root: string) => CheckpointStore): CliContext {
  let exitCode: number = ExitCode.ok;
  const exits: (() => Promise<void>)[] = [];
  return {
    io,
    style: createStyle(io.color),
    errStyle: createStyle(io.errColor ?? io.color),
    openStore,
    atExit(fn) {
      exits.push(fn);
    },
    async runExits() {
      for (const fn of exits.splice(0)) await fn().catch(() => {});
    },
    fail(code) {
      exitCode = Math.max(exitCode, code);
    },
    get exitCode() {
      return exitCode;
    },
  };
}

/** Resolve DIR and check it is a directory; a usage error otherwise. */
export async function requireDirectory(dir: string): Promise<string> {
  const root = path.resolve(dir);
  let stats;
  try {
    stats = await fsp.stat(root);
  } catch {
    throw new UsageError(`${dir}: no such directory`);
  }
  if (!stats.isDirectory()) throw new UsageError(`${dir} is not a directory`);
  return root;
}

/** Open DIR's store and find TASK in it; a usage error naming the command that lists tasks when there is no such task. */
export async function requireTask(
  ctx: CliContext,
  dir: string,
  taskId: string,
): Promise<{ root: string; store: CheckpointStore; entry: TaskEntry }> {
  const root = await requireDirectory(dir);
  const store = ctx.openStore(root);
  const entry = await store.getTask(taskId);
  if (!entry) throw new UsageError(`no task "${taskId}" in ${dir}; \`waystation ls ${dir}\` lists the tasks`);
  return { root, store, entry };
}

/**
 * Open what a location argument names for reading: a checkpoint directory
 * (its store), or a LangGraph checkpointer (a SQLite file, a `postgres://`
 * URL), read-only. A usage error saying what the location is otherwise.
 */
export async function requireSource(ctx: CliContext, location: string): Promise<{ root: string; source: CheckpointSource }> {
  const found = await detectLangGraph(location);
  if (found.kind === 'directory') return { root: found.dir, source: ctx.openStore(found.dir) };
  if (found.kind === 'neither') throw new UsageError(found.reason);
  const source = await openLangGraphSource(location);
  ctx.atExit(() => source.close());
  return { root: source.root, source };
}

/** Open a location (see requireSource) and find TASK in it; a usage error naming the command that lists tasks when there is no such task. */
export async function requireSourceTask(
  ctx: CliContext,
  location: string,
  taskId: string,
): Promise<{ root: string; source: CheckpointSource; entry: TaskEntry }> {
  const { root, source } = await requireSource(ctx, location);
  const entry = await source.getTask(taskId);
  if (!entry) throw new UsageError(`no task "${taskId}" in ${location}; \`waystation ls ${location}\` lists the tasks`);
  return { root, source, entry };
}

/** Parse a version argument: a positive integer, or `latest` when the latest version is known. */
export function parseVersion(text: string, latest: number | null): number {
  if (text === 'latest') {
    if (latest === null) throw new UsageError('"latest" cannot be used: the task has no readable latest version');
    return latest;
  }
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`"${text}" is not a version number: versions are 1, 2, 3, ... or "latest"`);
  }
  const n = Number(text);
  if (latest !== null && n > latest) throw new UsageError(`version ${n} does not exist: the task has versions 1 to ${latest}`);
  return n;
}
