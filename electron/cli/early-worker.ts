/**
 * The worker of `run`, `resume` and `approve`, started before the CLI has
 * loaded the command (runtime/worker-standby.ts), so the two processes load
 * at the same time. The compiled CLI's loader (cli-loader.ts) starts it before
 * it reads the CLI's script, so the worker's start overlaps all of the CLI's;
 * main.ts starts it when the CLI runs otherwise (the sources, the library),
 * which does nothing when one is already waiting.
 */
import { startStandbyWorker } from '../runtime/worker-standby.js';

/** The commands that hand their work to a worker process. */
const WORKER_COMMANDS = new Set(['run', 'resume', 'approve']);

/** The program's help flags: a command's help starts no worker. */
export const HELP_FLAGS: ReadonlySet<string> = new Set(['-h', '--help']);

/**
 * Whether `argv` (the arguments after the program name) runs a command that
 * starts a worker process, and not its help. The program takes no option with
 * a value, so the first argument not starting with `-` names the command.
 */
export function startsWorker(argv: readonly string[]): boolean {
  const first = argv.find((a) => !a.startsWith('-'));
  return first !== undefined && WORKER_COMMANDS.has(first) && !argv.some((a) => HELP_FLAGS.has(a));
}

/** Start the standby worker when `argv` will need one. */
export function startWorkerEarly(argv: readonly string[]): void {
  if (startsWorker(argv)) startStandbyWorker();
}
