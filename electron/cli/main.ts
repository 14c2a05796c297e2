/**
 * The `waystation` command line.
 *
 * Each command lives in `commands/<name>.ts` and exports `register(program, ctx)`;
 * `command-list.ts` lists them, so adding a command is one line there. `runCli` runs in-process (tests, other tools); the process
 * entry at the bottom runs only when this file is the program being started.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { terminalSafe } from './terminal-safe.js';
import { Command, CommanderError } from 'commander';
import type { CheckpointStore } from '../store/store-types.js';
import { createContext, ExitCode, UsageError, type CliIo } from './cli-context.js';
import { commandsToLoad } from './command-list.js';
import { startWorkerEarly } from './early-worker.js';
import { stopStandbyWorker } from '../runtime/worker-standby.js';
import { shouldColor } from './style.js';
import { importModule } from '../runtime/import-module.js';
import { LangGraphDatabaseError } from '../store/postgres/pg-schema.js';
import { PostgresUrlError } from '../store/postgres/pg-errors.js';

const EXIT_HELP = `
Exit status:
  0  done, nothing wrong found
  1  problems found: unreadable tasks (ls), drift or uncertain effects (verify),
     missing versions (history), unreadable versions (show, diff), a step
     result not there yet or unreadable (show, result)
  2  usage error: unknown command or option, missing DIR, unknown task or step,
     bad version, a LangGraph checkpointer where a Waystation store is needed,
     a database URL that does not parse

ls, show, result, history, diff and verify take --json for machine-readable output.
Colour is used on a terminal only; set NO_COLOR to turn it off.`;

/** This package's version: its package.json is two folders up from the sources, three from the compiled dist/. */
function packageVersion(): string {
  const require = createRequire(import.meta.url);
  for (const candidate of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = require(candidate) as { name?: string; version?: string };
      if (pkg.name === 'waystation' && pkg.version) return pkg.version;
    } catch {
      // Not this one; try the next folder up.
    }
  }
  return 'unknown';
}

/** The store opener of a run that registered no command: nothing can call it. */
function refuseStore(): never {
  throw new Error('no command was run, so no store can be opened');
}

export interface RunOptions {
  /** Opens a location's store (a directory or a PostgreSQL URL); `openLocation` by default. */
  openStore?: (location: string) => CheckpointStore;
}

/**
 * Run the CLI on `argv` (the arguments after the program name) and return the exit code.
 *
 * Never exits the process and never throws: commander's own exits (help,
 * version, usage errors) are turned into exit codes 0 or 2, usage mistakes in
 * the commands into 2, and unexpected failures into 1 with a message.
 */
export async function runCli(argv: readonly string[], given: CliIo, opts: RunOptions = {}): Promise<number> {
  // Everything a command writes goes out terminal-safe (output.ts, terminalSafe): a checkpoint's text is shown, never obeyed.
  const io: CliIo = { ...given, out: (s) => given.out(terminalSafe(s)), err: (s) => given.err(terminalSafe(s)) };
  // Only the commands this command line can run are imported: `--version` loads none, `ls` only its own.
  const commands = await Promise.all(commandsToLoad(argv).map((c) => c.load()));
  const storeOpener = opts.openStore ?? (commands.length > 0 ? (await import('../store/open-location.js')).openLocation : refuseStore);
  const ctx = createContext(io, storeOpener);
  const program = new Command('waystation')
    .description('Inspect and resume AI-agent checkpoints.')
    .version(packageVersion(), '-V, --version', 'print the Waystation version')
    // Program options only before the command name, so `show --version N` means the task's version.
    .enablePositionalOptions()
    // Set before the commands are added: subcommands copy these settings when created.
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s),
      writeErr: (s) => io.err(s),
      outputError: (s, write) => write(ctx.errStyle.red(s)),
      getOutHasColors: () => io.color,
      getErrHasColors: () => io.errColor ?? io.color,
    })
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', EXIT_HELP);
  for (const command of commands) command.register(program, ctx);

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    await ctx.runExits();
    if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    // A LangGraph database given where a Waystation store is needed is the wrong location, as a missing directory is;
    // a database URL that does not parse is bad input too.
    if (err instanceof UsageError || err instanceof LangGraphDatabaseError || err instanceof PostgresUrlError) {
      io.err(ctx.errStyle.red(`waystation: ${err.message}`) + '\n');
      return ExitCode.usage;
    }
    io.err(ctx.errStyle.red(`waystation: ${err instanceof Error ? err.message : String(err)}`) + '\n');
    return ExitCode.problems;
  }
  await ctx.runExits();
  return ctx.exitCode;
}

/** Ctrl-C, a stop asked by another program, and the terminal closed (SIGHUP): each ends a command as it should end. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** The streams of this process, coloured only where a person reads them. */
export function processIo(): CliIo {
  // A reader that went away (`waystation tail ... | head`, EPIPE) or a terminal closed (EIO) ends the output, not the
  // command: what is left is not written, and a run the command started ends as it would have (asked to stop, when
  // the terminal's closing sent SIGHUP).
  let outClosed = false;
  let errClosed = false;
  const gone = (err: NodeJS.ErrnoException) => err.code === 'EPIPE' || err.code === 'EIO';
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (!gone(err)) throw err;
    outClosed = true;
  });
  process.stderr.on('error', (err: NodeJS.ErrnoException) => {
    if (!gone(err)) throw err;
    errClosed = true;
  });
  return {
    out: (s) => {
      if (!outClosed) process.stdout.write(s);
    },
    outClosed: () => outClosed,
    err: (s) => {
      if (!errClosed) process.stderr.write(s);
    },
    color: shouldColor(process.stdout, process.env),
    errColor: shouldColor(process.stderr, process.env),
    ...(process.stdin.isTTY && process.stderr.isTTY ? { ask: askOnTerminal } : {}),
    onSignal: (handler) => {
      for (const signal of STOP_SIGNALS) process.on(signal, handler);
      return () => {
        for (const signal of STOP_SIGNALS) process.off(signal, handler);
      };
    },
  };
}

/** Ask on the terminal (stderr, so stdout stays the command's output) and resolve to the line typed. */
async function askOnTerminal(question: string): Promise<string> {
  // Through importModule: code the CLI's code cache compiled has no import() of its own (import-module.ts).
  const { createInterface } = await importModule<typeof import('node:readline/promises')>('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

/**
 * Started as `waystation` (bin/waystation.mjs, the npm bin link), as this very file, or as the compiled CLI's
 * loader (cli-loader.ts, which the build runs to write the code cache), rather than imported.
 */
function isProcessEntry(): boolean {
  const started = process.argv[1];
  if (!started) return false;
  if (path.resolve(started) === fileURLToPath(import.meta.url)) return true;
  return ['waystation', 'waystation.mjs', 'waystation.cmd', 'cli-loader.cjs'].includes(path.basename(started));
}

/** The process. No top-level await: the compiled CLI is one CommonJS script (cli-loader.ts), which has none. */
async function runAsProcess(): Promise<void> {
  const argv = process.argv.slice(2);
  // Under the compiled CLI its loader has started it already; this then does nothing.
  startWorkerEarly(argv);
  try {
    process.exitCode = await runCli(argv, processIo());
  } finally {
    // A run refused before it started a worker leaves the standby unused: it exits having done nothing.
    stopStandbyWorker();
  }
}

if (isProcessEntry()) void runAsProcess();
