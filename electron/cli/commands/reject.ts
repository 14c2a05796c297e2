/**
 * `waystation reject DIR TASK --reason TEXT`: reject a task's pending resume
 * plan. Who, when and why are recorded in a new version, and the task halts.
 */
import type { Command } from 'commander';
import { requireTask, type CliContext, STORE_ARGUMENT } from '../cli-context.js';
import { cliRunner, OPERATION_EXIT_HELP, reportOutcome } from './run.js';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('reject')
    .description("reject a task's pending resume plan and halt the task")
    .argument('<DIR>', STORE_ARGUMENT)
    .argument('<TASK>', 'the task id')
    .requiredOption('--reason <TEXT>', 'why the plan is rejected (recorded)')
    .option('--by <NAME>', 'who rejects (default: $USER)')
    .option('--json', 'print the outcome as JSON')
    .addHelpText('after', OPERATION_EXIT_HELP)
    .action(async (dir: string, taskId: string, opts: { reason: string; by?: string; json?: boolean }) => {
      const { root } = await requireTask(ctx, dir, taskId);
      reportOutcome(ctx, dir, await cliRunner(ctx, root, opts.by).reject(taskId, opts.reason), Boolean(opts.json));
    });
}
