/**
 * `waystation fork DIR TASK VERSION [--task NEW]`: a new task whose first
 * version is TASK's state at VERSION. TASK is only read; effects it had done
 * are carried as done, with their keys, so the fork does not repeat them.
 */
import type { Command } from 'commander';
import { parseVersion, requireTask, type CliContext, STORE_ARGUMENT } from '../cli-context.js';
import { cliRunner, OPERATION_EXIT_HELP, reportOutcome } from './run.js';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('fork')
    .description("start a new task from another task's state at a version (the original is never changed)")
    .argument('<DIR>', STORE_ARGUMENT)
    .argument('<TASK>', 'the task to fork')
    .argument('<VERSION>', 'the version to start from (a number, or "latest")')
    .option('--task <ID>', "the new task's id (default: <TASK>-fork-v<VERSION>-<random>)")
    .option('--reason <TEXT>', 'why (recorded)')
    .option('--by <NAME>', 'who forks (default: $USER)')
    .option('--json', 'print the outcome as JSON')
    .addHelpText('after', OPERATION_EXIT_HELP)
    .action(
      async (dir: string, taskId: string, versionText: string, opts: { task?: string; reason?: string; by?: string; json?: boolean }) => {
        const { root, entry } = await requireTask(ctx, dir, taskId);
        const version = parseVersion(versionText, entry.checkpoint?.version ?? null);
        reportOutcome(
          ctx,
          dir,
          await cliRunner(ctx, root, opts.by).fork(taskId, version, { taskId: opts.task, reason: opts.reason }),
          Boolean(opts.json),
        );
      },
    );
}
