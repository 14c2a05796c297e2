/**
 * What every `waystation` command is handed: where to write, how to style it,
 * how to open a directory's store, and how to say how the run went.
 *
 * Commands never call process.exit or write to process.stdout themselves, so
 * the whole CLI runs in-process in tests and inside other tools.
 */
import * as fsp from 'node:fs/promises';
import path from 'node:path';
import { isPostgresUrl, redactUrl } from '../store/postgres/redact-url.js';
import type { CheckpointSource, CheckpointStore, TaskEntry } from '../store/store-types.js';
import { detectLocation, type DetectedLocation } from '../sources/detect-location.js';
import { createStyle, type Style } from './style.js';
import { refuseUrlDirectory } from './directory-argument.js';

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
  /** Ask a person a question and resolve to the answer; absent when no one is at a terminal. */
  ask?(question: string): Promise<string>;
  /** Whether stdout's reader went away (`| head`): a command that keeps printing as it follows stops then. */
  outClosed?(): boolean;
  /**
   * Call `handler` on each Ctrl-C (SIGINT), SIGTERM or SIGHUP, instead of the process ending, until the function returned
   * is called. Absent where no process's signals are the command's (tests, a tool running the CLI in-process).
   */
  onSignal?(handler: (signal: NodeJS.Signals) => void): () => void;
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

/** The help text of a location argument that is written to: a directory or a Waystation database. */
export const STORE_ARGUMENT = 'the checkpoint directory, or a postgres:// URL of a Waystation store';
/** The help text of a location argument that is only read: also a LangGraph checkpointer. */
export const SOURCE_ARGUMENT =
  'the checkpoint directory, a postgres:// URL, or a LangGraph checkpointer (its SQLite file, or a postgres:// URL of its tables)';

/** A location as it may be printed: a URL without its password, a path as given. */
export function shownLocation(location: string): string {
  return isPostgresUrl(location) ? redactUrl(location) : location;
}

/**
 * A location argument checked: a PostgreSQL URL as it is (the store says
 * what is wrong with it when it is opened), a directory resolved and checked
 * to exist; a usage error otherwise.
 */
export async function requireLocation(location: string): Promise<string> {
  return isPostgresUrl(location) ? location : requireDirectory(location);
}

/** Resolve DIR and check it is a directory; a usage error otherwise. */
export async function requireDirectory(dir: string): Promise<string> {
  refuseUrlDirectory(dir);
  const root = path.resolve(dir);
  let stats;
  try {
    stats = await fsp.stat(root);
  } catch {
    throw new UsageError(`${dir}: no such directory`);
  }
  if (!stats.isDirectory()) {
    throw new UsageError(
      `${dir} is not a directory: this command works on a checkpoint directory or a postgres:// store` +
        (stats.isFile() ? '; a LangGraph checkpointer file is opened by ls, show, history, diff, result and serve' : ''),
    );
  }
  return root;
}

/** Open DIR's store and find TASK in it; a usage error naming the command that lists tasks when there is no such task. */
export async function requireTask(
  ctx: CliContext,
  dir: string,
  taskId: string,
): Promise<{ root: string; store: CheckpointStore; entry: TaskEntry }> {
  const root = await requireLocation(dir);
  const store = ctx.openStore(root);
  const entry = await store.getTask(taskId);
  const shown = shownLocation(dir);
  if (!entry) throw new UsageError(`no task "${taskId}" in ${shown}; \`waystation ls ${shown}\` lists the tasks`);
  return { root, store, entry };
}

/**
 * Open what a location argument names for reading: a checkpoint directory or
 * a Waystation database (its store), or a LangGraph checkpointer (a SQLite
 * file, a `postgres://` URL of a database holding LangGraph's tables),
 * read-only. A usage error saying what the location is otherwise. `root` is
 * the source's locator, safe to print (a URL without its password).
 */
export async function requireSource(ctx: CliContext, location: string): Promise<{ root: string; source: CheckpointSource }> {
  const found = await requireKnownLocation(ctx, location);
  if (found.kind === 'directory' || found.kind === 'postgres-store') {
    const store = ctx.openStore(found.kind === 'directory' ? found.dir : found.url);
    return { root: store.root, source: store };
  }
  // LangGraph's readers (msgpack, SQLite, PostgreSQL) load only for a LangGraph location.
  const { openLangGraphSource } = await import('../sources/langgraph/open-langgraph.js');
  const source = await openLangGraphSource(location);
  ctx.atExit(() => source.close());
  return { root: source.root, source };
}

/**
 * What a location argument names (detectLocation), for the reading commands and serve: a usage error when it is
 * nothing Waystation reads. A database holding Waystation's schema beside LangGraph's tables (pg-schema.ts,
 * databaseKind) is read as the Waystation store, and said so here, or its threads would vanish unsaid.
 */
export async function requireKnownLocation(ctx: CliContext, location: string): Promise<Exclude<DetectedLocation, { kind: 'neither' }>> {
  if (!isPostgresUrl(location)) refuseUrlDirectory(location);
  const found = await detectLocation(location);
  if (found.kind === 'neither') throw new UsageError(found.reason);
  if (found.kind === 'postgres-store' && found.holds === 'waystation-and-langgraph') {
    const shown = shownLocation(location);
    ctx.io.err(
      `note: ${shown} also holds LangGraph's checkpointer tables, whose threads are not shown: it is opened as the Waystation ` +
        `store it also holds. To browse the threads, copy the Waystation tasks to a store of their own (\`waystation copy ${shown} DIR\`), ` +
        'then drop Waystation\'s tables from this database (docs/POSTGRES.md, "A LangGraph database", gives the statement).\n',
    );
  }
  return found;
}

/** Open a location (see requireSource) and find TASK in it; a usage error naming the command that lists tasks when there is no such task. */
export async function requireSourceTask(
  ctx: CliContext,
  location: string,
  taskId: string,
): Promise<{ root: string; source: CheckpointSource; entry: TaskEntry }> {
  const { root, source } = await requireSource(ctx, location);
  const entry = await source.getTask(taskId);
  const shown = shownLocation(location);
  if (!entry) throw new UsageError(`no task "${taskId}" in ${shown}; \`waystation ls ${shown}\` lists the tasks`);
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
