/**
 * `waystation approve DIR TASK`: approve a confirm-mode task's pending resume
 * plan and resume exactly that plan (if the world changed since it was
 * prepared, a new plan is prepared instead and nothing runs).
 */
import type { Command } from 'commander';
import { requireTask, type CliContext, STORE_ARGUMENT } from '../cli-context.js';
import { addTrustOption, requireTrust } from '../trust-check.js';
import { stoppableRun } from '../interrupt.js';
import { cliRunner, reportOutcome, RUN_EXIT_HELP, streamRunner } from './run.js';

export function register(program: Command, ctx: CliContext): void {
  const command = program
    .command('approve')
    .description("approve a task's pending resume plan and resume it")
    .argument('<DIR>', STORE_ARGUMENT)
    .argument('<TASK>', 'the task id')
    .option('--by <NAME>', 'who approves (default: $USER)')
    .option('--json', 'print the outcome as JSON')
    .addHelpText('after', RUN_EXIT_HELP);
  addTrustOption(command).action(async (dir: string, taskId: string, opts: { by?: string; json?: boolean; trust?: boolean }) => {
    const { root, store } = await requireTask(ctx, dir, taskId);
    // The code that runs lives in the artifact folder: the directory itself, or for a database the folder the command runs in.
    await requireTrust(ctx, store.artifactRoot, {
      trust: opts.trust,
      command: 'approve',
      extra: [`task ${taskId}, resumed with its agent`],
    });
    const runner = cliRunner(ctx, root, opts.by);
    streamRunner(ctx, runner, Boolean(opts.json));
    reportOutcome(ctx, dir, await stoppableRun(ctx, runner, () => runner.approve(taskId)), Boolean(opts.json));
  });
}
