/**
 * The CLI's commands, each imported only when a command line can run it.
 *
 * A command module pulls in what its action needs (the store, the verifier,
 * the runner, the HTTP host); importing all of them costs more than the rest
 * of start-up together. So `waystation ls DIR` imports `ls` alone, and
 * `waystation --version` none at all; help, an unknown command and `help X`
 * still see every command, so usage errors can suggest the right name.
 */
import type { Command } from 'commander';
import type { CliContext } from './cli-context.js';
import { HELP_FLAGS } from './early-worker.js';

/** What a command module exports. */
export interface CommandModule {
  register(program: Command, ctx: CliContext): void;
}

/** A command by the name it registers, and how to import it. */
export interface CommandEntry {
  name: string;
  load(): Promise<CommandModule>;
}

/** Every command, in the order `--help` lists them. */
export const commandList: readonly CommandEntry[] = [
  { name: 'ls', load: () => import('./commands/ls.js') },
  { name: 'show', load: () => import('./commands/show.js') },
  { name: 'result', load: () => import('./commands/result.js') },
  { name: 'history', load: () => import('./commands/history.js') },
  { name: 'diff', load: () => import('./commands/diff.js') },
  { name: 'verify', load: () => import('./commands/verify.js') },
  { name: 'agents', load: () => import('./commands/agents.js') },
  { name: 'run', load: () => import('./commands/run.js') },
  { name: 'resume', load: () => import('./commands/resume.js') },
  { name: 'approve', load: () => import('./commands/approve.js') },
  { name: 'reject', load: () => import('./commands/reject.js') },
  { name: 'edit', load: () => import('./commands/edit.js') },
  { name: 'fork-thread', load: () => import('./commands/fork-thread.js') },
  { name: 'stop', load: () => import('./commands/stop.js') },
  { name: 'fork', load: () => import('./commands/fork.js') },
  { name: 'rewind', load: () => import('./commands/rewind.js') },
  { name: 'tail', load: () => import('./commands/tail.js') },
  { name: 'serve', load: () => import('./commands/serve.js') },
  { name: 'demo', load: () => import('./commands/demo.js') },
  { name: 'copy', load: () => import('./commands/copy.js') },
  { name: 'db', load: () => import('./commands/db.js') },
];

const VERSION_FLAGS = new Set(['-V', '--version']);

/**
 * The commands to register for `argv` (the arguments after the program name).
 *
 * The program itself takes no option with a value, so the first argument not
 * starting with `-` names the command: a known one is loaded alone. No command
 * and a version flag loads none; anything else (help, `help X`, a misspelt
 * command, nothing at all) loads every command.
 */
export function commandsToLoad(argv: readonly string[]): readonly CommandEntry[] {
  const first = argv.find((a) => !a.startsWith('-'));
  if (first === undefined) {
    const versionOnly = argv.some((a) => VERSION_FLAGS.has(a)) && !argv.some((a) => HELP_FLAGS.has(a));
    return versionOnly ? [] : commandList;
  }
  const known = commandList.find((c) => c.name === first);
  return known ? [known] : commandList;
}
