/**
 * `waystation stop DIR TASK`: stop the run that drives a task at its next
 * safe boundary (before a step starts or an effect is performed). It waits
 * for the run to stop; a second stop, `--force` or the wait running out ends
 * the runner's process. The task is left interrupted, is never resumed
 * automatically, and `waystation resume` continues it.
 */
import type { Command } from 'commander';
import { requireTask, UsageError, type CliContext, STORE_ARGUMENT } from '../cli-context.js';
import { cliRunner, OPERATION_EXIT_HELP, reportOutcome } from './run.js';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('stop')
    .description('stop a running task at its next step or effect; it stays resumable and is not retried automatically')
    .argument('<DIR>', STORE_ARGUMENT)
    .argument('<TASK>', 'the task id')
    .option('--reason <TEXT>', 'why it is stopped (recorded)')
    .option('--by <NAME>', 'who stops it (default: $USER)')
    .option('--wait <SECONDS>', 'how long to wait for the run to stop before ending its process (0: ask and return)', '30')
    .option('--force', "end the runner's process now (an effect in flight is probed on resume)")
    .option('--json', 'print the outcome as JSON')
    .addHelpText('after', OPERATION_EXIT_HELP)
    .action(async (dir: string, taskId: string, opts: { reason?: string; by?: string; wait: string; force?: boolean; json?: boolean }) => {
      const seconds = Number(opts.wait);
      if (!/^\d+(\.\d+)?$/.test(opts.wait) || !Number.isFinite(seconds))
        throw new UsageError(`--wait takes a number of seconds, not "${opts.wait}"`);
      const { root } = await requireTask(ctx, dir, taskId);
      const outcome = await cliRunner(ctx, root, opts.by).stop(taskId, { reason: opts.reason, force: opts.force, waitMs: seconds * 1000 });
      reportOutcome(ctx, dir, outcome, Boolean(opts.json));
    });
}
